/* The terminal: curses start/stop, and signals. SIGINT/SIGTERM/SIGHUP/SIGWINCH go through a
 * self-pipe into the event loop (which then exits cleanly or re-lays out); SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL and SIGABRT restore the terminal first, then get their previous action
 * (the default, or a sanitizer's report) by re-raising. */
#include "ui/ui_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* Sanitizer builds: ASan/UBSan findings end the process with _exit, not a signal. Their
 * runtime calls this hook first; in other builds the weak symbol is NULL. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static SCREEN *term_screen;
static volatile sig_atomic_t term_active;
static int term_pipe[2] = {-1, -1};

static const int term_loop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
static const int term_crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static struct sigaction term_saved[NSIG];
static bool term_installed;

int term_start(char **err)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        *err = strdup("the dashboard needs a terminal: stdin and stdout must be a tty");
        return -1;
    }
    const char *type = getenv("TERM");
    if (!type || !*type) {
        *err = strdup("TERM is not set: cannot drive the terminal");
        return -1;
    }
    term_screen = newterm(NULL, stdout, stdin);
    if (!term_screen) {
        if (asprintf(err, "cannot use terminal type '%s' (no terminfo entry?)", type) < 0)
            *err = NULL;
        return -1;
    }
    set_term(term_screen);
    term_active = 1;
    cbreak();
    noecho();
    intrflush(stdscr, FALSE);
    curs_set(0);
    set_escdelay(25);
    return 0;
}

void term_stop(void)
{
    if (!term_screen)
        return;
    curs_set(1);
    endwin();
    term_active = 0;
    delscreen(term_screen);
    term_screen = NULL;
}

static void term_on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (term_pipe[1] >= 0 && write(term_pipe[1], &b, 1) < 0) {
        /* pipe full: a byte is already waiting, which is enough */
    }
    errno = saved;
}

static void term_on_crash(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    if (term_active) {
        /* Not async-signal-safe, as in every curses program that does this (htop
         * CRT_handleSIGSEGV): the terminal matters more than a perfect core. */
        term_active = 0;
        endwin();
    }
    sigaction(sig, &term_saved[sig], NULL);
    /* A real fault repeats when we return, now under the previous action; a sent or raised
     * signal (and abort) is raised again. */
    if (sig == SIGABRT || info->si_code <= 0)
        raise(sig);
}

static void term_on_sanitizer_death(void)
{
    if (term_active) {
        term_active = 0;
        endwin();
    }
}

int term_signals_install(char **err)
{
    if (pipe2(term_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        if (asprintf(err, "pipe: %s", strerror(errno)) < 0)
            *err = NULL;
        return -1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = term_on_signal;
    sa.sa_flags = SA_RESTART;
    /* curses installed its own handlers for some of these: ours replace them (SIGWINCH is
     * then handled by term_resize()). */
    for (size_t i = 0; i < sizeof(term_loop_signals) / sizeof(term_loop_signals[0]); i++)
        sigaction(term_loop_signals[i], &sa, &term_saved[term_loop_signals[i]]);
    struct sigaction crash;
    memset(&crash, 0, sizeof(crash));
    sigemptyset(&crash.sa_mask);
    crash.sa_sigaction = term_on_crash;
    crash.sa_flags = SA_SIGINFO;
    for (size_t i = 0; i < sizeof(term_crash_signals) / sizeof(term_crash_signals[0]); i++)
        sigaction(term_crash_signals[i], &crash, &term_saved[term_crash_signals[i]]);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(term_on_sanitizer_death);
    term_installed = true;
    return 0;
}

void term_signals_remove(void)
{
    if (!term_installed)
        return;
    for (size_t i = 0; i < sizeof(term_loop_signals) / sizeof(term_loop_signals[0]); i++)
        sigaction(term_loop_signals[i], &term_saved[term_loop_signals[i]], NULL);
    for (size_t i = 0; i < sizeof(term_crash_signals) / sizeof(term_crash_signals[0]); i++)
        sigaction(term_crash_signals[i], &term_saved[term_crash_signals[i]], NULL);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(NULL);
    term_installed = false;
    for (int i = 0; i < 2; i++) {
        if (term_pipe[i] >= 0)
            close(term_pipe[i]);
        term_pipe[i] = -1;
    }
}

int term_signal_fd(void)
{
    return term_pipe[0];
}

unsigned long term_signals_read(void)
{
    unsigned long set = 0;
    unsigned char buf[64];
    ssize_t n;
    while ((n = read(term_pipe[0], buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] < sizeof(set) * 8)
                set |= 1ul << buf[i];
    return set;
}

void term_resize(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resizeterm(ws.ws_row, ws.ws_col);
}

void term_keys_raw(bool on)
{
    static bool raw_now;
    if (!term_screen || on == raw_now)
        return;
    raw_now = on;
    if (on)
        raw();
    else
        cbreak();
}
