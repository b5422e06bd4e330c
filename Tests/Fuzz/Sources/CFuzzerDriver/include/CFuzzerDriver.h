// libFuzzer's driver entry point (compiler-rt FuzzerInterface.h): runs the fuzzing loop with `callback` as the
// target, parsing libFuzzer's flags from argc/argv. Declared here so that Swift can call it from its own main.
#pragma once
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
