/* Platforms, OpenHands' `platform` ("linux/amd64", "linux/arm64/v8", ...): what a runtime image
 * is built for and a sandbox created as. Docker takes any, and pulls, builds or fails late
 * when its host cannot run it; the engine asks first, so an image the daemon cannot run is
 * refused before anything is built. */
#ifndef PADDOCK_PLATFORM_H
#define PADDOCK_PLATFORM_H

#include <jansson.h>
#include <stdbool.h>

/* Where the kernel lists its binfmt_misc handlers (the emulators, qemu-ARCH). */
#define PLATFORM_BINFMT_DIR "/proc/sys/fs/binfmt_misc"

/* "os/arch" or "os/arch/variant": lower-case letters and digits, at most 64 bytes. */
bool platform_valid(const char *platform);
/* Whether the daemon described by info (its "OSType" and "Architecture") can run platform:
 * natively, or (local: the daemon shares this kernel) through an enabled binfmt_misc
 * emulator in binfmt_dir. 0, or -1 with *why (malloc'd; NULL when out of memory) saying what
 * the daemon runs and how to get emulation. */
int platform_check(json_t *info, bool local, const char *binfmt_dir, const char *platform,
                   char **why);

#endif
