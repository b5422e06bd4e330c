#define _GNU_SOURCE
#include <sys/resource.h>
#include "CALSAShim.h"
static void sc_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
void sc_alsa_silence_errors(void) { snd_lib_error_set_handler(sc_alsa_quiet); }

int sc_alsa_xrun_info_get(snd_pcm_t *pcm, sc_alsa_xrun_info *info) {
    snd_pcm_status_t *status;
    snd_pcm_status_alloca(&status);
    int err = snd_pcm_status(pcm, status);
    if (err < 0) return err;
    info->state = (int)snd_pcm_status_get_state(status);
    info->avail = (long)snd_pcm_status_get_avail(status);
    snd_htimestamp_t trigger, now;
    snd_pcm_status_get_trigger_htstamp(status, &trigger);
    snd_pcm_status_get_htstamp(status, &now);
    if ((trigger.tv_sec == 0 && trigger.tv_nsec == 0) || (now.tv_sec == 0 && now.tv_nsec == 0)) {
        info->secondsSinceTrigger = -1;
    } else {
        info->secondsSinceTrigger = (double)(now.tv_sec - trigger.tv_sec) + (double)(now.tv_nsec - trigger.tv_nsec) * 1e-9;
    }
    return 0;
}

int sc_alsa_open_lconf_text(snd_pcm_t **pcm, snd_config_t **config, const char *name, const char *config_text,
                            snd_pcm_stream_t stream, int mode) {
    snd_config_t *top = NULL;
    snd_input_t *input = NULL;
    int err = snd_config_top(&top);
    if (err < 0) return err;
    err = snd_input_buffer_open(&input, config_text, -1);
    if (err < 0) { snd_config_delete(top); return err; }
    err = snd_config_load(top, input);
    snd_input_close(input);
    if (err < 0) { snd_config_delete(top); return err; }
    err = snd_pcm_open_lconf(pcm, name, stream, mode, top);
    if (err < 0) { snd_config_delete(top); return err; }
    *config = top;
    return 0;
}

double sc_alsa_thread_cpu_seconds(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return -1;
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6
         + (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
}
