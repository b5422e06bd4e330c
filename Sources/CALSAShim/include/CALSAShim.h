#ifndef CALSASHIM_H
#define CALSASHIM_H
#include <alsa/asoundlib.h>
/// Silences ALSA's variadic stderr error handler (errors are reported through return codes instead).
void sc_alsa_silence_errors(void);
#endif
