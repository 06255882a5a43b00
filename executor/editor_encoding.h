/* The editor's file encodings: detection, decoding to UTF-8, encoding back.
 *
 * OpenHands' editor asks charset-normalizer for a file's encoding and writes edits back in
 * that encoding. Here the choice is between the encodings that matter in practice and that
 * can be told apart with a documented rule:
 *
 *   1. valid UTF-8 (which includes ASCII and the empty file) -> "utf-8";
 *   2. otherwise cp1251 or latin-1, by which reading makes the high bytes look like words:
 *      in Russian text they form whole words (runs of two or more letters that are all
 *      0xC0-0xFF, plus Ё/ё), in Western European text they sit inside words of ASCII letters.
 *      Runs of high letters count for cp1251, high letters mixed with ASCII letters for
 *      latin-1, C1 bytes 0x80-0x9F (controls in latin-1, punctuation in cp1251) for cp1251.
 *      cp1251 wins only with the larger score and no 0x98 byte (undefined in cp1251), so
 *      every file decodes and re-encodes to the same bytes.
 *
 * The whole file is looked at (files are at most 10 MB), not its first megabyte. */
#ifndef PADDOCK_EXECUTOR_EDITOR_ENCODING_H
#define PADDOCK_EXECUTOR_EDITOR_ENCODING_H

#include <stddef.h>

#include "common/buf.h"

enum editor_encoding {
    EDITOR_ENC_UTF8,
    EDITOR_ENC_CP1251,
    EDITOR_ENC_LATIN1,
};

enum editor_encoding editor_encoding_detect(const char *data, size_t n);
/* Python's codec name, as error messages show it: "utf-8", "cp1251", "latin-1". */
const char *editor_encoding_name(enum editor_encoding enc);
/* Appends data decoded to UTF-8. Never fails for a detected encoding except for memory. */
int editor_encoding_decode(enum editor_encoding enc, const char *data, size_t n, struct buf *out);
/* Appends UTF-8 text encoded. Returns 0; 1 with Python's UnicodeEncodeError text in err
 * ("'charmap' codec can't encode character '\u4e2d' in position 3: character maps to
 * <undefined>") when a character has no byte in enc; -1 when memory runs out. */
int editor_encoding_encode(enum editor_encoding enc, const char *text, size_t n, struct buf *out,
                           struct buf *err);

#endif
