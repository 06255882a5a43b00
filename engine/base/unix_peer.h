/* Connecting to a unix socket that lies in a directory someone else can write (a sandbox's
 * socket dir, bind-mounted writable into its container), and checking who serves it. Root in
 * the sandbox can put anything at that path; the engine runs as the host's root, so it must
 * never follow a link there nor talk to whoever happens to listen. */
#ifndef PADDOCK_UNIX_PEER_H
#define PADDOCK_UNIX_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* An O_PATH fd of the socket at path, opened without following a link in its last two
 * components (the socket, and the directory holding it): a symlink, a FIFO, a regular file or
 * anything else that is not a socket is refused. Connecting to "/proc/self/fd/<fd>" then
 * reaches exactly the inode checked. Returns the fd, or -1 with why in err and *refused set
 * when something else than a socket is there (not when nothing is). */
int unix_peer_open(const char *path, bool *refused, char *err, size_t errlen);

/* Whether the process serving the connected socket fd (SO_PEERCRED: the listener) runs the
 * file exe (the same inode, or a copy of the same bytes: a runtime image bakes one in) inside the
 * pid namespace of process init (a container's first process, as this host sees it). Where the
 * kernel gives a pidfd of the peer (SO_PEERPIDFD), the process is checked to be still alive after
 * /proc was read, so a reused pid cannot stand in for it. 0; -1 with why (refused); -2 with why
 * when init or the server is exiting or gone (the container stopped, restarted or was killed: not a
 * refusal). */
int unix_peer_check(int fd, const char *exe, pid_t init, char *err, size_t errlen);

#endif
