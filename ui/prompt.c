/* Two small modals every view shares: a one-line text prompt on the bottom row (search,
 * filter, the `:` command line, a rejection's reason, a file name) and a yes/no question
 * whose default is no (Enter never confirms anything destructive). */
#include "common/utf8.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROMPT_MAX 1024

struct prompt {
    char label[128];
    char text[PROMPT_MAX]; /* UTF-8 */
    size_t len;
    prompt_done_fn done;
    prompt_change_fn changed; /* or NULL */
    void *ud;
};

/* Drop the last character (a whole UTF-8 sequence). */
static void prompt_backspace(char *text, size_t *len)
{
    *len = utf8_prev(text, *len);
    text[*len] = '\0';
}

/* Ctrl-W: the last word and the spaces before it. */
static void prompt_kill_word(char *text, size_t *len)
{
    while (*len > 0 && text[*len - 1] == ' ')
        (*len)--;
    while (*len > 0 && text[*len - 1] != ' ')
        (*len)--;
    text[*len] = '\0';
}

bool prompt_edit(char *text, size_t *len, size_t cap, int key, bool code)
{
    if (code) {
        if (key != KEY_BACKSPACE)
            return false;
        prompt_backspace(text, len);
        return true;
    }
    switch (key) {
    case 127:
    case KEY_CTRL('h'):
        prompt_backspace(text, len);
        return true;
    case KEY_CTRL('u'):
        *len = 0;
        text[0] = '\0';
        return true;
    case KEY_CTRL('w'):
        prompt_kill_word(text, len);
        return true;
    default:
        if (key >= 0x20 && key != 0x7F && key <= 0x10FFFF) {
            if (*len + 5 <= cap) {
                *len += utf8_put((uint32_t)key, text + *len);
                text[*len] = '\0';
            }
            return true;
        }
        return false;
    }
}

static unsigned prompt_finish(struct ui *ui, bool accept)
{
    struct prompt *p = ui->modal_state;
    prompt_done_fn done = p->done;
    void *ud = p->ud;
    char *text = accept ? strdup(p->text) : NULL;
    ui_modal_close(ui); /* frees p; done may open another modal */
    unsigned dirty = done ? done(ui, accept ? (text ? text : "") : NULL, ud) : 0;
    free(text);
    return dirty | UI_DIRTY_ALL;
}

static unsigned prompt_on_key(struct ui *ui, int key, bool code)
{
    struct prompt *p = ui->modal_state;
    if (code && key == KEY_ENTER)
        return prompt_finish(ui, true);
    if (!code)
        switch (key) {
        case '\n':
        case '\r':
            return prompt_finish(ui, true);
        case 27:            /* Esc */
        case KEY_CTRL('c'): /* Ctrl-C: the same, as in a shell's prompt */
        case KEY_CTRL('g'):
            return prompt_finish(ui, false);
        default:
            break;
        }
    unsigned dirty = UI_DIRTY_FOOTER;
    if (prompt_edit(p->text, &p->len, sizeof(p->text), key, code) && p->changed)
        dirty |= p->changed(ui, p->text, p->ud);
    return dirty;
}

static void prompt_draw(struct ui *ui)
{
    struct prompt *p = ui->modal_state;
    WINDOW *w = ui->win_footer;
    if (!w)
        return;
    int width = getmaxx(w);
    werase(w);
    draw_fill(w, 0, 0, width, theme_attr(UI_C_FOOTER));
    int x = draw_text(ui, w, 0, 0, width / 2, p->label, theme_attr(UI_C_FOOTER_KEY));
    int tw = draw_text_width(ui, p->text);
    /* the end of a long text stays visible */
    const char *shown = p->text;
    while (tw > width - x - 2 && *shown) {
        shown += utf8_next(shown, strlen(shown));
        tw = draw_text_width(ui, shown);
    }
    x += draw_text(ui, w, 0, x, width - x - 1, shown, theme_attr(UI_C_FOOTER));
    draw_text(ui, w, 0, x, 1, "_", theme_attr(UI_C_FOOTER_KEY) | A_BLINK);
    wnoutrefresh(w);
}

static const struct ui_modal prompt_modal = {
    .on_key = prompt_on_key,
    .draw = prompt_draw,
};

void prompt_open(struct ui *ui, const char *label, const char *initial, prompt_done_fn done,
                 void *ud)
{
    prompt_open_live(ui, label, initial, done, NULL, ud);
}

void prompt_open_live(struct ui *ui, const char *label, const char *initial, prompt_done_fn done,
                      prompt_change_fn changed, void *ud)
{
    struct prompt *p = calloc(1, sizeof(*p));
    if (!p) {
        ui_set_error(ui, "out of memory");
        return;
    }
    snprintf(p->label, sizeof(p->label), "%s", label);
    snprintf(p->text, sizeof(p->text), "%s", initial ? initial : "");
    p->len = strlen(p->text);
    p->done = done;
    p->changed = changed;
    p->ud = ud;
    ui_modal_open(ui, &prompt_modal, p);
}

/* ---- yes / no ---- */

struct confirm {
    char question[512];
    confirm_fn yes;
    void *ud;
};

static unsigned confirm_on_key(struct ui *ui, int key, bool code)
{
    struct confirm *c = ui->modal_state;
    if (!code && (key == 'y' || key == 'Y')) {
        confirm_fn yes = c->yes;
        void *ud = c->ud;
        ui_modal_close(ui);
        return (yes ? yes(ui, ud) : 0) | UI_DIRTY_ALL;
    }
    /* n, Esc, Enter and anything else: no */
    ui_modal_close(ui);
    ui_set_status(ui, "cancelled");
    return UI_DIRTY_ALL;
}

static void confirm_draw(struct ui *ui)
{
    struct confirm *c = ui->modal_state;
    int tw = draw_text_width(ui, c->question);
    int w = tw + 6, h = 5;
    if (w < 36)
        w = 36;
    if (w > COLS - 2)
        w = COLS - 2;
    if (w < 10 || LINES < h + 2)
        return;
    if (!ui->win_modal)
        ui->win_modal = newwin(h, w, (LINES - h) / 2, (COLS - w) / 2);
    WINDOW *win = ui->win_modal;
    if (!win)
        return;
    attr_t base = theme_attr(UI_C_HELP);
    wbkgdset(win, ' ' | base);
    werase(win);
    wattrset(win, theme_attr(UI_C_BAD) | A_BOLD);
    box(win, 0, 0);
    wattrset(win, A_NORMAL);
    draw_text(ui, win, 0, 2, w - 4, " Confirm ", theme_attr(UI_C_BAD) | A_BOLD);
    draw_text(ui, win, 1, 2, w - 4, c->question, base | A_BOLD);
    draw_text(ui, win, 3, 2, w - 4, "y yes   n / Esc / Enter no", base);
    wnoutrefresh(win);
}

static const struct ui_modal confirm_modal = {
    .on_key = confirm_on_key,
    .draw = confirm_draw,
};

void confirm_open(struct ui *ui, const char *question, confirm_fn yes, void *ud)
{
    struct confirm *c = calloc(1, sizeof(*c));
    if (!c) {
        ui_set_error(ui, "out of memory");
        return;
    }
    snprintf(c->question, sizeof(c->question), "%s", question);
    c->yes = yes;
    c->ud = ud;
    ui_modal_open(ui, &confirm_modal, c);
}
