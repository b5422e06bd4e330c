#ifndef CALSASHIM_H
#define CALSASHIM_H
#include <alsa/asoundlib.h>
/// Silences ALSA's variadic stderr error handler (errors are reported through return codes instead).
void sc_alsa_silence_errors(void);

/// What `snd_pcm_status` says about a capture overrun (snd_pcm_status_alloca is a macro, hence C).
typedef struct sc_alsa_xrun_info {
    /// snd_pcm_state_t of the stream when asked.
    int state;
    /// Frames ready in the ring buffer (unread; lost when the stream is re-prepared).
    long avail;
    /// Seconds from the xrun (trigger timestamp) to the status timestamp; negative if unknown.
    double secondsSinceTrigger;
} sc_alsa_xrun_info;

/// Fills `info` from snd_pcm_status(); returns 0 or a negative errno.
int sc_alsa_xrun_info_get(snd_pcm_t *pcm, sc_alsa_xrun_info *info);

/// Opens PCM `name` from the ALSA configuration text `config_text` (snd_config_load over an input buffer,
/// then snd_pcm_open_lconf). On success `*config` must be freed with snd_config_delete after snd_pcm_close.
/// Returns 0 or a negative errno.
int sc_alsa_open_lconf_text(snd_pcm_t **pcm, snd_config_t **config, const char *name, const char *config_text,
                            snd_pcm_stream_t stream, int mode);
/// CPU time (user + system, seconds) of the calling thread (getrusage RUSAGE_THREAD, a GNU extension
/// Swift's Glibc module does not export); -1 on failure. Used to report the capture thread's cost.
double sc_alsa_thread_cpu_seconds(void);
#endif
