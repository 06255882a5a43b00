/* What the record's next entry links to, remembered (store_chain.c reads it at every entry):
 * the newest seq and engine hash, each session's newest hash, and the session of the newest
 * actions. The engine is the record's only writer, so what it appended is what the store
 * holds, except after a rollback: then all of it is forgotten (SQLite's rollback hook for a
 * transaction, store_chain_heads_forget for a savepoint) and read again from the store. */
#include "engine/store/store_internal.h"

#include <stdlib.h>
#include <string.h>

/* Open addressing on the session's name; full (a long-lived engine of many sessions), it is
 * emptied and refilled from the store as sessions write again. */
#define HEADS_SLOTS 1024
#define HEADS_MAX_USED (HEADS_SLOTS * 3 / 4)
/* The newest actions' sessions, by id modulo this: an action's end is recorded soon after its
 * intent, so it is still there. */
#define HEADS_ACTIONS 512

struct head_slot {
    char session[STORE_CHAIN_SESSION_MAX + 1];
    char hash[65];
    bool used;
};

struct action_slot {
    int64_t id;
    char session[STORE_CHAIN_SESSION_MAX + 1];
};

struct store_chain_heads {
    bool known; /* seq and engine_hash are the store's */
    int64_t seq;
    char engine_hash[65];
    bool null_known; /* the head of the entries of no session */
    char null_hash[65];
    size_t used;
    struct head_slot slots[HEADS_SLOTS];
    struct action_slot actions[HEADS_ACTIONS];
};

static void on_rollback(void *ud)
{
    store_chain_heads_forget(ud);
}

int store_chain_heads_init(struct store *s)
{
    s->heads = calloc(1, sizeof(*s->heads));
    if (!s->heads)
        return -1;
    sqlite3_rollback_hook(s->db, on_rollback, s);
    return 0;
}

void store_chain_heads_free(struct store *s)
{
    if (s->db)
        sqlite3_rollback_hook(s->db, NULL, NULL);
    free(s->heads);
    s->heads = NULL;
}

void store_chain_heads_forget(struct store *s)
{
    if (s->heads)
        memset(s->heads, 0, sizeof(*s->heads));
}

static size_t heads_hash(const char *sid)
{
    size_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)sid; *p; p++)
        h = h * 33 + *p;
    return h % HEADS_SLOTS;
}

/* The slot of sid, or the empty one where it would go; NULL when sid is too long to hold. */
static struct head_slot *heads_slot(struct store_chain_heads *h, const char *sid)
{
    if (strlen(sid) > STORE_CHAIN_SESSION_MAX)
        return NULL;
    for (size_t i = heads_hash(sid), n = 0; n < HEADS_SLOTS; i = (i + 1) % HEADS_SLOTS, n++)
        if (!h->slots[i].used || strcmp(h->slots[i].session, sid) == 0)
            return &h->slots[i];
    return NULL;
}

bool store_chain_heads_engine(struct store *s, int64_t *seq, char engine_hash[65])
{
    if (!s->heads || !s->heads->known)
        return false;
    *seq = s->heads->seq;
    memcpy(engine_hash, s->heads->engine_hash, 65);
    return true;
}

bool store_chain_heads_session(struct store *s, const char *sid, char hash[65])
{
    struct store_chain_heads *h = s->heads;
    if (!h)
        return false;
    if (!sid) {
        if (h->null_known)
            memcpy(hash, h->null_hash, 65);
        return h->null_known;
    }
    struct head_slot *slot = heads_slot(h, sid);
    if (!slot || !slot->used)
        return false;
    memcpy(hash, slot->hash, 65);
    return true;
}

void store_chain_heads_set(struct store *s, int64_t seq, const char engine_hash[65],
                           const char *sid, const char hash[65])
{
    struct store_chain_heads *h = s->heads;
    if (!h)
        return;
    h->known = true;
    h->seq = seq;
    memcpy(h->engine_hash, engine_hash, 65);
    if (!sid) {
        h->null_known = true;
        memcpy(h->null_hash, hash, 65);
        return;
    }
    struct head_slot *slot = heads_slot(h, sid);
    if (!slot)
        return;
    if (!slot->used) {
        if (h->used >= HEADS_MAX_USED) {
            /* Full: keep the engine's head, drop the sessions' (read again when needed). */
            memset(h->slots, 0, sizeof(h->slots));
            h->used = 0;
            slot = heads_slot(h, sid);
        }
        slot->used = true;
        memcpy(slot->session, sid, strlen(sid) + 1);
        h->used++;
    }
    memcpy(slot->hash, hash, 65);
}

void store_chain_heads_action(struct store *s, int64_t action_id, const char *sid)
{
    if (!s->heads || !sid || strlen(sid) > STORE_CHAIN_SESSION_MAX || action_id <= 0)
        return;
    struct action_slot *a = &s->heads->actions[(uint64_t)action_id % HEADS_ACTIONS];
    a->id = action_id;
    memcpy(a->session, sid, strlen(sid) + 1);
}

const char *store_chain_heads_action_session(struct store *s, int64_t action_id)
{
    if (!s->heads || action_id <= 0)
        return NULL;
    struct action_slot *a = &s->heads->actions[(uint64_t)action_id % HEADS_ACTIONS];
    return a->id == action_id ? a->session : NULL;
}
