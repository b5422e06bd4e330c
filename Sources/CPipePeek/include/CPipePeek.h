// Linux tee(2), which Swift's Glibc module does not export (it needs _GNU_SOURCE).
#pragma once
#include <sys/types.h>

/// Copies up to `len` bytes from pipe `fd_in` to pipe `fd_out` without consuming them (tee(2), flags 0).
ssize_t sc_pipe_tee(int fd_in, int fd_out, size_t len);
