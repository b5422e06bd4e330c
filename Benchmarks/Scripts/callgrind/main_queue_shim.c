// LD_PRELOAD shim for running the sleepcycle CLI under valgrind 3.19 (Benchmarks/Scripts/instructions.sh).
// The CLI's async main ends in dispatch_main(), which pthread_exit()s the main thread; valgrind 3.19 crashes after
// that. This dispatch_main() keeps the main thread and drains the main queue itself, through the entry points
// libdispatch exports for CoreFoundation's run loop. The program still ends by calling exit().
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

void dispatch_main(void) {
    int fd = _dispatch_get_main_queue_handle_4CF();
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        poll(&p, 1, -1);
        if (p.revents & POLLIN) { uint64_t v; (void)read(fd, &v, sizeof v); }
        _dispatch_main_queue_callback_4CF(0);
    }
}
