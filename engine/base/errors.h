/* The engine's error codes: one table of every code an API error reply carries
 * ({"error": {"code", "message"}}), its HTTP status and what it means. Code passes the enum
 * around; the text and the status come from the table only where a reply is built.
 * docs/architecture.md lists the same table (tests/unit/test_errors.c holds them equal). */
#ifndef PADDOCK_ERRORS_H
#define PADDOCK_ERRORS_H

enum err_code {
    ERR_NONE, /* no error: a success */
    ERR_BAD_REQUEST,
    ERR_INVALID_JSON,
    ERR_BUILD_FAILED,
    ERR_IMAGE_NOT_FOUND,
    ERR_UNAUTHORIZED,
    ERR_FORBIDDEN,
    ERR_NOT_FOUND,
    ERR_METHOD_NOT_ALLOWED,
    ERR_CONFLICT,
    ERR_ALREADY_DECIDED,
    ERR_EXPIRED,
    ERR_SESSION_GONE,
    ERR_NOT_PENDING,
    ERR_SESSION_PAUSED,
    ERR_SESSION_STOPPED,
    ERR_AMBIGUOUS,
    ERR_TOO_LARGE,
    ERR_INTERNAL,
    ERR_STORE_ERROR,
    ERR_EXECUTOR_MISSING,
    ERR_NOT_IMPLEMENTED,
    ERR_DOCKER_ERROR,
    ERR_EXECUTOR_ERROR,
    ERR_GIT_ERROR,
    ERR_UNAVAILABLE,
    ERR_DOCKER_UNAVAILABLE,
    ERR_STOPPING,
    ERR_EXECUTOR_TIMEOUT,
    ERR_STORAGE_FULL,
    ERR_REQUEST_TIMEOUT,
    ERR_HEADERS_TOO_LARGE,
    ERR_BUSY,
    ERR_HTTP_VERSION,
    ERR_COUNT
};

struct err_entry {
    const char *name;    /* the JSON code: "bad_request" */
    unsigned status;     /* the HTTP status of a reply with this code */
    const char *meaning; /* one line, for docs/architecture.md */
};

/* Indexed by enum err_code; ERR_NONE's row has no name. */
extern const struct err_entry err_table[ERR_COUNT];

/* The JSON code of e ("conflict"); NULL for ERR_NONE or a value out of range. */
const char *err_name(enum err_code e);
/* The HTTP status of e (409); 500 for a value out of range, 0 for ERR_NONE. */
unsigned err_status(enum err_code e);

#endif
