#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdline.h"
#include "spawn.h"
#include "which.h"

/* Reads per wakeup: enough to drain a busy tty, few enough that HTTP and timers get their
 * turn while a command floods output. */
#define SHELL_READS_PER_WAKEUP 16

static char shell_read_buf[65536];

static int make_nonce(char out[33])
{
    unsigned char raw[16];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        got += (size_t)n;
    }
    if (got < sizeof raw) {
        /* Kernels before 3.17 lack getrandom. */
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        ssize_t n = read(fd, raw, sizeof raw);
        close(fd);
        if (n != (ssize_t)sizeof raw)
            return -1;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* Tags as the shell prints them; the init line only ever holds them in pieces, so neither
 * `echo $PROMPT_COMMAND` nor `set` can print a marker. */
static void marker_tags(const struct shell *sh, char *begin, char *end)
{
    /* 0x1e first: output that ends in a prefix of the tag is held back until the next read
     * decides, and no ordinary output ends in an ASCII record separator. */
    snprintf(begin, MARKER_TAG_MAX, "\036PDK%s{", sh->nonce);
    snprintf(end, MARKER_TAG_MAX, "}%sKDP__", sh->nonce);
}

static int init_parser(struct shell *sh)
{
    char begin[MARKER_TAG_MAX], end[MARKER_TAG_MAX];
    marker_tags(sh, begin, end);
    return marker_parser_init(&sh->parser, begin, end);
}

int shell_init(struct shell *sh, struct evloop *loop, const struct shell_options *opt,
               shell_event_fn on_event, void *ctx)
{
    memset(sh, 0, sizeof *sh);
    sh->opt = *opt;
    sh->loop = loop;
    sh->fd = -1;
    sh->pid = -1;
    sh->on_event = on_event;
    sh->ctx = ctx;
    capture_init(&sh->out, 0, 0);
    if (make_nonce(sh->nonce) < 0)
        return -1;
    return init_parser(sh);
}

/* Canonical mode (so programs get lines and ^D), no echo and no output processing (so the
 * bytes read are exactly what programs printed), signals from ^C ^\ ^Z, and no editing keys:
 * nobody types here, and a command's bytes should reach the shell unchanged. */
static void make_termios(struct termios *t)
{
    t->c_iflag &= ~(tcflag_t)(ICRNL | INLCR | IGNCR | IXON | IXOFF | IXANY | ISTRIP | INPCK |
                              IMAXBEL | BRKINT | PARMRK);
#ifdef IUTF8
    t->c_iflag |= IUTF8;
#endif
    t->c_oflag &= ~(tcflag_t)OPOST;
    t->c_lflag &=
        ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL | ECHOKE | ECHOPRT | IEXTEN | TOSTOP);
    /* NOFLSH: ^C must not throw away output the executor has not read yet. */
    t->c_lflag |= ICANON | ISIG | NOFLSH;
    t->c_cflag |= CS8 | CREAD;
    t->c_cc[VINTR] = 0x03;
    t->c_cc[VQUIT] = 0x1c;
    t->c_cc[VSUSP] = 0x1a;
    t->c_cc[VEOF] = 0x04;
    t->c_cc[VERASE] = _POSIX_VDISABLE;
    t->c_cc[VKILL] = _POSIX_VDISABLE;
    t->c_cc[VEOL] = _POSIX_VDISABLE;
    t->c_cc[VEOL2] = _POSIX_VDISABLE;
    t->c_cc[VSTART] = _POSIX_VDISABLE;
    t->c_cc[VSTOP] = _POSIX_VDISABLE;
    t->c_cc[VMIN] = 1;
    t->c_cc[VTIME] = 0;
}

static void on_shell_fd(struct evloop_watch *w, uint32_t events);

static void update_interest(struct shell *sh)
{
    bool want = sh->wq.len > 0;
    if (want == sh->writing || sh->fd < 0)
        return;
    if (evloop_mod(sh->loop, &sh->watch, EPOLLIN | (want ? EPOLLOUT : 0)) == 0)
        sh->writing = want;
}

static void flush_writes(struct shell *sh)
{
    size_t done = 0;
    while (done < sh->wq.len) {
        ssize_t n = write(sh->fd, sh->wq.data + done, sh->wq.len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) /* the tty is gone; the reaper will tell */
                done = sh->wq.len;
            break;
        }
        done += (size_t)n;
    }
    memmove(sh->wq.data, sh->wq.data + done, sh->wq.len - done);
    sh->wq.len -= done;
    update_interest(sh);
}

static int queue_write(struct shell *sh, const char *data, size_t n)
{
    if (sh->fd < 0)
        return -1;
    if (buf_append(&sh->wq, data, n) < 0)
        return -1;
    flush_writes(sh);
    return 0;
}

static void remove_script(struct shell *sh)
{
    if (sh->script[0])
        unlink(sh->script);
    sh->script[0] = '\0';
}

/* Hostnames are letters, digits, dots and dashes; anything else must not reach the quotes. */
static void safe_hostname(const char *in, char *out, size_t outlen)
{
    size_t i = 0;
    for (; in && in[i] && i + 1 < outlen; i++) {
        char c = in[i];
        out[i] = (c == '.' || c == '-' || c == '_' || (c >= '0' && c <= '9') ||
                  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
                     ? c
                     : '-';
    }
    out[i] = '\0';
}

/* The marker format for bash's printf: nonce halves and fields come as arguments. */
#define BASH_MARKER_FORMAT "\"\\036PDK%%s%%s{%%s;%%s;%%s;%%s;%%s;%%s\\037%%s\\037%%s}%%s%%sKDP__\""
#define BASH_MARKER_ARGS                                                                           \
    "%s %s \"$__pdk_s\" \"${!:-}\" \"$EUID\" \"$__pdk_i\" \"$$\" \"$HOSTNAME\" \"$PATH\" "         \
    "\"$PWD\" %s %s"
/* The same marker in three words (stdin and stdout the terminal): bash expands three words for
 * a fraction of what fourteen cost it. */
#define BASH_MARKER_WORDS                                                                          \
    "'\\036%%s\\037%%s\\037%%s' \"PDK%s\"\"%s{$__pdk_s;${!:-};$EUID;1;$$;$HOSTNAME\" \"$PATH\" "   \
    "\"$PWD}%s\"\"%sKDP__\""

static int send_init(struct shell *sh)
{
    char n1[17], n2[17];
    struct buf line = BUF_INIT;
    int rc;
    memcpy(n1, sh->nonce, 16);
    n1[16] = '\0';
    memcpy(n2, sh->nonce + 16, 17);
    /* The agent's rc file first, on a line of its own: what it prints comes before the first
     * marker (dropped), an error in it cannot cut the init line short, and whatever it sets
     * for prompts is overridden next. Variables persisted by POST /env live there. */
    rc = buf_append_str(&line, " [ -r ~/.bashrc ] && . ~/.bashrc\n");
    /* Aliases the rc file made would be expanded inside the marker's code as it is read (an
     * alias named `[[`, `if` or `builtin`): they are off for the next line and back after it.
     * A quoted word is never an alias, so this line is safe from them too. */
    if (rc == 0 && sh->opt.bash)
        rc = buf_append_str(&line, " \\builtin shopt -q expand_aliases&&__pdk_x=1||__pdk_x=0;"
                                   "\\builtin shopt -u expand_aliases\n");
    if (rc == 0 && sh->opt.bash) {
        /* A function, so bash parses the marker's code once instead of at every prompt (a
         * quarter of its work for a quick command). $? first, before anything changes it
         * (a function starts with its caller's); bash restores it after PROMPT_COMMAND.
         * Exported, both, so a nested interactive bash (exec bash, su -p) still reports.
         * When the agent sent the shell's stdout elsewhere (exec >/dev/null), the marker goes
         * to the terminal itself, so the shell keeps reporting. The usual case (both stdin and
         * stdout the terminal) prints it from three words: a fifth of bash's CPU for `echo hi`. */
        rc = buf_printf(
            &line,
            " __pdk_m(){ __pdk_s=$?;if [[ -t 0 && -t 1 ]];then builtin printf " BASH_MARKER_WORDS
            ";else __pdk_i=0;builtin test -t 0&&__pdk_i=1;"
            "if builtin test -t 1;then "
            "builtin printf " BASH_MARKER_FORMAT " " BASH_MARKER_ARGS
            ";else builtin printf " BASH_MARKER_FORMAT " " BASH_MARKER_ARGS
            " 2>/dev/null >/dev/tty;fi;fi;builtin unset __pdk_s __pdk_i;};"
            " builtin export -f __pdk_m; builtin export PROMPT_COMMAND=__pdk_m"
            " PS1= PS2=; set +H; unset HISTFILE;"
            "builtin test \"$__pdk_x\" = 1&&builtin shopt -s expand_aliases;builtin unset "
            "__pdk_x\n",
            n1, n2, n1, n2, n1, n2, n1, n2, n1, n2, n1, n2);
    } else if (rc == 0) {
        /* POSIX sh (busybox ash): PS1 is expanded at each prompt, $? included. The __pdk_*
         * names are the executor's: nothing else it runs in the shell may use them.
         * __pdk_settle (see SETTLE_LINE) prints a marker of shell pid 0, waits for a line
         * and keeps $?. */
        char host[MARKER_HOST_MAX];
        safe_hostname(sh->opt.hostname, host, sizeof host);
        rc = buf_printf(&line,
                        " __pdk_a=%s __pdk_b=%s __pdk_r=$(printf '\\036') __pdk_u=$(printf "
                        "'\\037'); PS1='${__pdk_r}PDK${__pdk_a}${__pdk_b}{$?;$!;%lu;1;$$;%s"
                        "${__pdk_u}$PATH${__pdk_u}$PWD}${__pdk_a}${__pdk_b}KDP__' PS2=; "
                        "unset HISTFILE; __pdk_settle(){ echo \"${__pdk_r}PDK$__pdk_a$__pdk_b"
                        "{0;;0;1;0;$__pdk_u$__pdk_u}$__pdk_a${__pdk_b}KDP__\" >&2;read -r "
                        "__pdk_t;unset __pdk_t;return $1;}\n",
                        n1, n2, (unsigned long)sh->opt.uid, host);
    }
    if (rc == 0)
        rc = queue_write(sh, line.data, line.len);
    buf_free(&line);
    return rc;
}

int shell_start(struct shell *sh)
{
    int master = -1, slave = -1;
    char name[128];
    struct winsize ws = {.ws_row = SHELL_ROWS, .ws_col = SHELL_COLS};
    char *argv_bash[] = {"bash", "--noediting", "--norc", "--noprofile", "-i", NULL};
    char *argv_sh[] = {"sh", "-i", NULL};

    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
        ptsname_r(master, name, sizeof name) != 0)
        goto fail;
    slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0 || tcgetattr(slave, &sh->tio) < 0)
        goto fail;
    make_termios(&sh->tio);
    memset(&sh->tio_seen, 0, sizeof sh->tio_seen); /* a new tty: set before the first command */
    ioctl(master, TIOCSWINSZ, &ws);

    struct spawn_options so = {
        .path = sh->opt.path,
        .argv = sh->opt.bash ? argv_bash : argv_sh,
        .envp = sh->opt.envp,
        .workdir = sh->opt.workdir,
        .switch_user = sh->opt.switch_user,
        .uid = sh->opt.uid,
        .gid = sh->opt.gid,
        .fds = {slave, slave, slave},
        .nfds = 3,
        .tty = &sh->tio,
    };
    pid_t pid = spawn_process(&so);
    if (pid < 0)
        goto fail;
    close(slave);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);

    sh->fd = master;
    sh->pid = pid;
    sh->ready = false;
    sh->busy = false;
    sh->lost = false;
    sh->writing = false;
    sh->settle = SHELL_SETTLE_NONE;
    sh->watch.fd = master;
    sh->watch.fn = on_shell_fd;
    buf_reset(&sh->wq);
    marker_parser_free(&sh->parser);
    if (init_parser(sh) < 0 || evloop_add(sh->loop, &sh->watch, EPOLLIN) < 0) {
        shell_stop(sh);
        return -1;
    }
    if (send_init(sh) < 0) {
        shell_stop(sh);
        return -1;
    }
    return 0;
fail:
    if (slave >= 0)
        close(slave);
    if (master >= 0)
        close(master);
    return -1;
}

static void close_master(struct shell *sh)
{
    if (sh->fd < 0)
        return;
    evloop_del(sh->loop, &sh->watch);
    close(sh->fd);
    sh->fd = -1;
    sh->writing = false;
}

void shell_stop(struct shell *sh)
{
    /* The shell leads its own session and process group; the job in the foreground (a
     * command it waits for) has a group of its own, which goes too. */
    pid_t fg = sh->fd >= 0 && sh->pid > 0 ? tcgetpgrp(sh->fd) : -1;
    if (fg > 0 && fg != sh->pid)
        kill(-fg, SIGKILL);
    spawn_stop(sh->pid, &sh->pid);
    close_master(sh);
    remove_script(sh);
    sh->ready = sh->busy = false;
    sh->settle = SHELL_SETTLE_NONE;
}

void shell_free(struct shell *sh)
{
    shell_stop(sh);
    marker_parser_free(&sh->parser);
    buf_free(&sh->wq);
    capture_reset(&sh->out);
}

static void set_modes(struct shell *sh)
{
    tcsetattr(sh->fd, TCSANOW, &sh->tio);
    memset(&sh->tio_seen, 0, sizeof sh->tio_seen);
    tcgetattr(sh->fd, &sh->tio_seen);
}

static void sink_output(void *ctx, const char *data, size_t n)
{
    struct shell *sh = ctx;
    if (sh->settle != SHELL_SETTLE_NONE) /* the settling line's echo and tag: ours */
        return;
    capture_append(&sh->out, data, n);
    sh->last_output = evloop_now();
    if (sh->tap && sh->ready) /* before the first marker: start-up noise */
        sh->tap(sh->tap_ctx, data, n);
}

/* busybox ash's line editor decides at each prompt, from the modes the last command left,
 * whether to take the line itself (unless they are canonical without echo): then it echoes
 * what is typed, asks for the cursor (ESC[6n) and puts those modes back after each line it
 * reads, so setting ours before typing comes too late. Its own raw modes show it at work:
 * only then, a line is typed that prints a tag and waits in `read`; the modes are set once
 * the tag shows the editor let go, and an empty line ends the read, so the next prompt
 * samples our modes. The command is over at that prompt, with its own marker; $? is kept. */
#define SETTLE_LINE " __pdk_settle $?\n" /* under CMDLINE_SH_LINE_MAX: send_init has the rest */

static bool editor_took_prompt(const struct shell *sh, const struct marker_info *m)
{
    struct termios now;
    return !sh->opt.bash && m->shell_pid == sh->pid && tcgetattr(sh->fd, &now) == 0 &&
           !(now.c_lflag & ICANON);
}

/* The command is over; at the first marker, the shell is ready. */
static void command_over(struct shell *sh)
{
    sh->settle = SHELL_SETTLE_NONE;
    sh->busy = false;
    if (sh->ready) {
        sh->on_event(sh, SHELL_EVENT_MARKER, sh->ctx);
        return;
    }
    /* What came before the first marker is start-up noise (banner, first prompt). */
    sh->ready = true;
    capture_clear(&sh->out);
    sh->on_event(sh, SHELL_EVENT_READY, sh->ctx);
}

/* A marker while settling: the tag (shell pid 0) or a prompt. A prompt before the tag means
 * the line did not run as typed (^C): the command is over all the same. */
static void settle_marker(struct shell *sh, const struct marker_info *m)
{
    if (sh->settle == SHELL_SETTLE_TAG && m->shell_pid == 0) {
        set_modes(sh);
        sh->settle = SHELL_SETTLE_PROMPT;
        if (queue_write(sh, "\n", 1) < 0)
            command_over(sh);
    } else if (m->shell_pid != 0) {
        command_over(sh);
    }
}

static void sink_marker(void *ctx, const struct marker_info *m)
{
    struct shell *sh = ctx;
    if (sh->settle != SHELL_SETTLE_NONE) {
        settle_marker(sh, m);
        return;
    }
    marker_info_copy(&sh->marker, m);
    remove_script(sh); /* read by now: bash reads it whole, ash holds it open */
    if (sh->ready && !m->stdin_tty && m->shell_pid == sh->pid) {
        /* exec 0<&- or exec </dev/null: the shell is about to read EOF and exit, and would
         * take the next command with it. It takes no more commands; on_shell_fd ends it. */
        sh->lost = true;
        sh->ready = false;
        sh->busy = false;
        sh->on_event(sh, SHELL_EVENT_MARKER, sh->ctx);
        return;
    }
    /* At the first marker too: the rc file may have run stty echo. Until settled, the
     * command (or the start) is not over: busy stays as it is. */
    if (editor_took_prompt(sh, m) && queue_write(sh, SETTLE_LINE, sizeof SETTLE_LINE - 1) == 0)
        sh->settle = SHELL_SETTLE_TAG;
    else
        command_over(sh);
}

/* Returns false once the tty is gone for good (EIO: no process holds its slave side).
 * until_empty: read until the tty has nothing (EAGAIN); else a short read ends it, as the
 * loop's watch is level-triggered and says when more comes (saves a read per wakeup). */
static bool read_available(struct shell *sh, int max_reads, bool until_empty)
{
    const struct marker_sink sink = {sink_output, sink_marker, sh};
    for (int i = 0; i < max_reads && sh->fd >= 0; i++) {
        ssize_t n = read(sh->fd, shell_read_buf, sizeof shell_read_buf);
        if (n > 0) {
            marker_feed(&sh->parser, shell_read_buf, (size_t)n, &sink);
            if (!until_empty && (size_t)n < sizeof shell_read_buf)
                return true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return true;
        return false;
    }
    return true;
}

static void on_shell_fd(struct evloop_watch *w, uint32_t events)
{
    struct shell *sh = EVLOOP_CONTAINER_OF(w, struct shell, watch);
    if (events & EPOLLOUT)
        flush_writes(sh);
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        if (!read_available(sh, SHELL_READS_PER_WAKEUP, false)) {
            /* Hung up: stop watching (EPOLLHUP would fire forever); SIGCHLD tells the rest. */
            evloop_del(sh->loop, &sh->watch);
            sh->writing = false;
        }
    }
    if (sh->lost && sh->pid > 0) {
        /* Out of the parser now: end it; the reaper reports EXITED as for any death. */
        kill(-sh->pid, SIGKILL);
        kill(sh->pid, SIGKILL);
    }
}

void shell_drain(struct shell *sh)
{
    if (sh->fd >= 0)
        read_available(sh, 1 << 20, true);
}

void shell_reaped(struct shell *sh, int status)
{
    const struct marker_sink sink = {sink_output, sink_marker, sh};
    /* Output the shell printed before it ended is still in the tty: keep it. */
    shell_drain(sh);
    marker_flush(&sh->parser, &sink);
    close_master(sh);
    remove_script(sh);
    sh->pid = -1;
    sh->ready = sh->busy = false;
    sh->settle = SHELL_SETTLE_NONE;
    sh->exit_status = status;
    sh->on_event(sh, SHELL_EVENT_EXITED, sh->ctx);
}

int shell_script_dir_create(const char *parent, char *out, size_t outlen, struct buf *err)
{
    /* Short: the line that sources a file (". 'DIR/cmd.PID'") must fit busybox ash's line
     * buffer. Quoted in '' on that line, so the name holds no quote and no line's end. */
    enum { SCRIPT_DIR_MAX = CMDLINE_SH_LINE_MAX - 17 };
    int len = parent ? snprintf(out, outlen, "%s/cmd.XXXXXX", parent)
                     : snprintf(out, outlen, "/tmp/paddock-cmd.XXXXXX");
    if (len < 0 || (size_t)len >= outlen || len > SCRIPT_DIR_MAX || out[0] != '/' ||
        strpbrk(out, "'\n\r")) {
        buf_printf(err, "the command directory's name in %s would be too long for the shell",
                   parent ? parent : "/tmp");
        out[0] = '\0';
        return -1;
    }
    /* Searchable by the shell's uid, listable by nobody else: it opens its own file only. */
    if (!mkdtemp(out) || chmod(out, 0711) < 0) {
        buf_printf(err, "cannot make the command directory %s: %s", out, strerror(errno));
        out[0] = '\0';
        return -1;
    }
    return 0;
}

static int write_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The command into the shell's file: a fresh inode each time (a shell still reading the
 * last one through its descriptor keeps what it had), owned by the shell's uid, 0600. */
static int write_script(struct shell *sh, const char *cmd, size_t n, struct buf *err)
{
    remove_script(sh);
    int len = snprintf(sh->script, sizeof sh->script, "%s/cmd.%ld",
                       sh->opt.script_dir ? sh->opt.script_dir : "", (long)sh->pid);
    if (!sh->opt.script_dir || len < 0 || (size_t)len >= sizeof sh->script) {
        sh->script[0] = '\0';
        buf_printf(err, "no directory for long commands");
        return -1;
    }
    int fd = open(sh->script, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = fd < 0 || (sh->opt.switch_user && fchown(fd, sh->opt.uid, sh->opt.gid) < 0) ? -1 : 0;
    /* A shell string cannot hold NUL: the bytes around them, as the tty would pass them. */
    for (size_t i = 0; rc == 0 && i < n;) {
        const char *nul = memchr(cmd + i, '\0', n - i);
        size_t end = nul ? (size_t)(nul - cmd) : n;
        rc = write_all(fd, cmd + i, end - i);
        i = end + 1;
    }
    if (rc == 0)
        rc = write_all(fd, "\n", 1);
    if (fd >= 0 && close(fd) < 0)
        rc = -1;
    if (rc < 0) {
        buf_printf(err, "cannot write %s: %s", sh->script, strerror(errno));
        remove_script(sh);
    }
    return rc;
}

/* Types cmd: as a line when direct, else sourced from a script; sourced: from a script
 * whatever its size (shell_type_hidden's wrapped steps). */
static int type_line(struct shell *sh, const char *cmd, size_t n, bool sourced, struct buf *err)
{
    struct buf line = BUF_INIT;
    int rc;
    if (sh->fd < 0) {
        buf_printf(err, "the shell is not running");
        return -1;
    }
    /* A program that crashed in raw mode, or `stty echo`, must not change how the next
     * command's output reads. Set again only when the modes are not those set last time (a
     * read is lighter than a set, which rebuilds the line discipline's state). */
    struct termios now;
    memset(&now, 0, sizeof now);
    if (tcgetattr(sh->fd, &now) != 0 || memcmp(&now, &sh->tio_seen, sizeof now) != 0)
        set_modes(sh);
    if (!sourced &&
        cmdline_is_direct(cmd, n, sh->opt.bash ? CMDLINE_DIRECT_MAX : CMDLINE_SH_LINE_MAX)) {
        rc = buf_append(&line, cmd, n) < 0 || buf_append(&line, "\n", 1) < 0 ? -1 : 0;
    } else {
        /* `.` runs it in this shell (cwd, variables and functions stay) and its status is
         * the file's last command's, which the marker reports. */
        rc = write_script(sh, cmd, n, err);
        if (rc == 0)
            rc = buf_printf(&line, "%s. '%s'\n", sh->opt.bash ? "\\builtin " : "", sh->script);
    }
    if (rc == 0 && (rc = queue_write(sh, line.data, line.len)) < 0)
        buf_printf(err, "cannot write to the shell's terminal");
    buf_free(&line);
    if (rc == 0)
        sh->busy = true;
    return rc;
}

int shell_type_command(struct shell *sh, const char *cmd, size_t n, struct buf *err)
{
    return type_line(sh, cmd, n, false, err);
}

int shell_type_hidden(struct shell *sh, const char *cmd, size_t n, struct buf *err)
{
    /* busybox ash has no shopt; without a directory for scripts (it could not be made) there
     * is no file to source; a nested shell (the last marker's $$ is not ours: `su nobody`)
     * may not read the executor's file: typed as any command, then. */
    if (!sh->opt.bash || !sh->opt.script_dir || sh->marker.shell_pid != (long)sh->pid)
        return type_line(sh, cmd, n, false, err);
    /* bash expands an alias as it parses a command, so one the agent's rc made (`if`, `[`,
     * `builtin`) would turn the executor's own code into something else. A sourced file is
     * parsed a command at a time: the first line turns aliases off; the group after it is
     * parsed whole with them off, then its first command turns them back on (when they were
     * on) before the step runs. So what the step sources (the setup script) sees the
     * session's aliases, as in OpenHands, and nothing is left off when a signal ends the
     * step. A quoted word is never an alias; the group's status is the step's. */
    struct buf text = BUF_INIT;
    int rc = buf_append_str(&text, "\\builtin shopt -q expand_aliases&&__pdk_x=1||__pdk_x=0;"
                                   "\\builtin shopt -u expand_aliases\n{ \\builtin test "
                                   "\"$__pdk_x\" = 1&&\\builtin shopt -s expand_aliases;"
                                   "\\builtin unset __pdk_x\n") < 0 ||
                     buf_append(&text, cmd, n) < 0 || buf_append_str(&text, "\n}") < 0
                 ? -1
                 : 0;
    if (rc < 0)
        buf_printf(err, "out of memory");
    else
        rc = type_line(sh, text.data, text.len, true, err);
    buf_free(&text);
    return rc;
}

int shell_send(struct shell *sh, const char *data, size_t n)
{
    return queue_write(sh, data, n);
}

/* Input the tty holds and no program read yet would otherwise reach the shell as a command
 * once the program dies. Only the slave side can flush it (NOFLSH keeps the tty from doing
 * it on ^C, for the output's sake). Best effort: without it the signal still goes. */
static void flush_typed_ahead(struct shell *sh)
{
    char name[128];
    if (ptsname_r(sh->fd, name, sizeof name) != 0)
        return;
    int fd = open(name, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        tcflush(fd, TCIFLUSH);
        close(fd);
    }
}

int shell_send_key(struct shell *sh, int key)
{
    static const struct {
        int cc;
        int sig;
    } signal_keys[] = {{VINTR, SIGINT}, {VQUIT, SIGQUIT}, {VSUSP, SIGTSTP}};
    struct termios t;
    if (sh->fd < 0)
        return -1;
    /* The master's mode requests act on the slave: this is what the program set. */
    if (tcgetattr(sh->fd, &t) == 0 && (t.c_lflag & ISIG))
        for (size_t i = 0; i < sizeof signal_keys / sizeof signal_keys[0]; i++) {
            cc_t c = t.c_cc[signal_keys[i].cc];
            if (c == _POSIX_VDISABLE || c != (cc_t)key)
                continue;
            buf_reset(&sh->wq);
            update_interest(sh);
            flush_typed_ahead(sh);
            if (ioctl(sh->fd, TIOCSIG, signal_keys[i].sig) == 0)
                return 0;
            break; /* no TIOCSIG: the byte, as a terminal sends it */
        }
    return queue_write(sh, (const char[]){(char)key}, 1);
}

pid_t shell_foreground(const struct shell *sh)
{
    /* On the master, tcgetpgrp answers for the slave side. */
    return sh->fd < 0 ? -1 : tcgetpgrp(sh->fd);
}

int shell_find(const char *path_env, char *out, size_t outlen, bool *is_bash)
{
    /* bash from PATH, else /bin/bash, else /bin/sh. */
    static const struct {
        const char *dir, *name;
        bool bash;
    } tries[] = {{NULL, "bash", true}, {"/bin", "bash", true}, {"/bin", "sh", false}};
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++)
        if (which_find(tries[i].dir ? tries[i].dir : path_env, NULL, tries[i].name, out, outlen)) {
            *is_bash = tries[i].bash;
            return 0;
        }
    return -1;
}
