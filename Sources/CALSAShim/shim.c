#include "CALSAShim.h"
static void sc_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
void sc_alsa_silence_errors(void) { snd_lib_error_set_handler(sc_alsa_quiet); }
