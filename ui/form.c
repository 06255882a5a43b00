/* A small form (a modal): labelled text and choice fields in a centred box. Tab and Down go to
 * the next field, Shift-Tab and Up to the previous one; Left, Right and Space change a choice;
 * Enter submits (the caller may refuse a value, or send the values and wait for the engine,
 * which may refuse one: the form then stays with everything typed, the field at fault marked
 * and the cursor on it, saying why); Esc cancels. */
#include "common/utf8.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORM_TEXT_MAX 256

struct form_entry {
    char label[48];
    enum form_kind kind;
    char text[FORM_TEXT_MAX];
    size_t len;
    const char *const *choices;
    size_t choice, nchoices;
    const char *help;
};

struct form {
    char title[96];
    struct form_entry f[FORM_MAX_FIELDS];
    size_t n, cur;
    char err[256];
    int bad;      /* the field err is about, or -1 */
    bool waiting; /* sent: the engine's answer is due (form_answer) */
    form_submit_fn submit;
    void *ud;
};

static unsigned form_on_key(struct ui *ui, int key, bool code);
static void form_draw(struct ui *ui);

static const struct ui_modal form_modal = {
    .on_key = form_on_key,
    .draw = form_draw,
};

static unsigned form_submit(struct ui *ui)
{
    struct form *fm = ui->modal_state;
    const char *values[FORM_MAX_FIELDS];
    for (size_t i = 0; i < fm->n; i++)
        values[i] =
            fm->f[i].kind == FORM_CHOICE ? fm->f[i].choices[fm->f[i].choice] : fm->f[i].text;
    if (fm->waiting) /* one request at a time */
        return 0;
    fm->err[0] = '\0';
    fm->bad = -1;
    int rc = fm->submit ? fm->submit(ui, values, fm->ud, fm->err, sizeof(fm->err), &fm->bad) : 0;
    if (rc < 0) {
        if (!fm->err[0])
            snprintf(fm->err, sizeof(fm->err), "not accepted");
        if (fm->bad >= 0 && (size_t)fm->bad < fm->n)
            fm->cur = (size_t)fm->bad;
        return UI_DIRTY_ALL;
    }
    if (rc > 0) {
        fm->waiting = true;
        return UI_DIRTY_ALL;
    }
    ui_modal_close(ui);
    return UI_DIRTY_ALL;
}

bool form_waiting(const struct ui *ui)
{
    return ui->modal == &form_modal && ((const struct form *)ui->modal_state)->waiting;
}

void form_answer(struct ui *ui, int bad, const char *err)
{
    if (!form_waiting(ui))
        return;
    struct form *fm = ui->modal_state;
    fm->waiting = false;
    if (!err) {
        ui_modal_close(ui);
        return;
    }
    snprintf(fm->err, sizeof(fm->err), "%s", err);
    fm->bad = bad >= 0 && (size_t)bad < fm->n ? bad : -1;
    if (fm->bad >= 0)
        fm->cur = (size_t)fm->bad;
}

static unsigned form_on_key(struct ui *ui, int key, bool code)
{
    struct form *fm = ui->modal_state;
    struct form_entry *e = &fm->f[fm->cur];
    if (code) {
        switch (key) {
        case KEY_ENTER:
            return form_submit(ui);
        case KEY_DOWN:
            fm->cur = (fm->cur + 1) % fm->n;
            return UI_DIRTY_ALL;
        case KEY_UP:
        case KEY_BTAB:
            fm->cur = (fm->cur + fm->n - 1) % fm->n;
            return UI_DIRTY_ALL;
        case KEY_LEFT:
        case KEY_RIGHT:
            if (e->kind == FORM_CHOICE)
                e->choice = (e->choice + (key == KEY_RIGHT ? 1 : e->nchoices - 1)) % e->nchoices;
            return UI_DIRTY_ALL;
        default:
            break;
        }
    } else {
        switch (key) {
        case '\n':
        case '\r':
            return form_submit(ui);
        case '\t':
            fm->cur = (fm->cur + 1) % fm->n;
            return UI_DIRTY_ALL;
        case 27: /* Esc */
        case KEY_CTRL('c'):
        case KEY_CTRL('g'):
            ui_modal_close(ui);
            ui_set_status(ui, "cancelled");
            return UI_DIRTY_ALL;
        case ' ':
            if (e->kind == FORM_CHOICE) {
                e->choice = (e->choice + 1) % e->nchoices;
                return UI_DIRTY_ALL;
            }
            break;
        default:
            break;
        }
    }
    if (!fm->waiting && e->kind == FORM_TEXT &&
        prompt_edit(e->text, &e->len, sizeof(e->text), key, code) && (int)fm->cur == fm->bad) {
        fm->err[0] = '\0'; /* the value at fault is being corrected */
        fm->bad = -1;
    }
    return UI_DIRTY_ALL;
}

static void form_draw(struct ui *ui)
{
    struct form *fm = ui->modal_state;
    int labelw = 0;
    for (size_t i = 0; i < fm->n; i++) {
        int w = draw_text_width(ui, fm->f[i].label);
        labelw = w > labelw ? w : labelw;
    }
    int h = (int)fm->n + 6, w = 72;
    if (w > COLS - 2)
        w = COLS - 2;
    if (w < 30 || LINES < h + 2)
        return;
    if (ui->win_modal && (getmaxy(ui->win_modal) != h || getmaxx(ui->win_modal) != w)) {
        delwin(ui->win_modal);
        ui->win_modal = NULL;
    }
    if (!ui->win_modal)
        ui->win_modal = newwin(h, w, (LINES - h) / 2, (COLS - w) / 2);
    WINDOW *win = ui->win_modal;
    if (!win)
        return;
    attr_t base = theme_attr(UI_C_HELP);
    wbkgdset(win, ' ' | base);
    werase(win);
    wattrset(win, theme_attr(UI_C_BORDER_FOCUS));
    box(win, 0, 0);
    wattrset(win, A_NORMAL);
    char title[128];
    snprintf(title, sizeof(title), " %s ", fm->title);
    draw_text(ui, win, 0, 2, w - 4, title, theme_attr(UI_C_TITLE) | A_BOLD);
    int vx = 2 + labelw + 2, vw = w - vx - 2;
    for (size_t i = 0; i < fm->n; i++) {
        const struct form_entry *e = &fm->f[i];
        bool cur = i == fm->cur, bad = (int)i == fm->bad;
        int y = 1 + (int)i;
        draw_text(ui, win, y, 2, labelw, e->label,
                  bad   ? theme_attr(UI_C_BAD) | A_BOLD
                  : cur ? theme_attr(UI_C_HELP_KEY)
                        : base);
        if (bad) /* the mark: in the gap between the label and the value */
            draw_text(ui, win, y, 2 + labelw, 2, draw_glyph(ui, "\xE2\x9C\x97", "!"),
                      theme_attr(UI_C_BAD) | A_BOLD);
        attr_t va = cur ? theme_attr(UI_C_SELECTED) : base | A_UNDERLINE;
        draw_fill(win, y, vx, vw, va);
        if (e->kind == FORM_CHOICE) {
            int x = vx;
            for (size_t c = 0; c < e->nchoices && x < vx + vw; c++) {
                char item[64];
                snprintf(item, sizeof(item), c == e->choice ? "[%s]" : " %s ", e->choices[c]);
                x += draw_text(ui, win, y, x, vx + vw - x, item, c == e->choice ? va | A_BOLD : va);
            }
        } else {
            /* the end of a long value stays visible, and the cursor after it */
            const char *shown = e->text;
            while (draw_text_width(ui, shown) > vw - 1 && *shown) {
                shown += utf8_next(shown, strlen(shown));
            }
            int x = vx + draw_text(ui, win, y, vx, vw - 1, shown, va);
            if (cur)
                draw_text(ui, win, y, x, 1, "_", va | A_BLINK);
        }
    }
    int y = (int)fm->n + 2;
    if (fm->waiting)
        draw_text(ui, win, y, 2, w - 4, "sent to the engine, waiting for its answer ...", base);
    else if (fm->err[0])
        draw_text(ui, win, y, 2, w - 4, fm->err, theme_attr(UI_C_BAD));
    else if (fm->f[fm->cur].help)
        draw_text(ui, win, y, 2, w - 4, fm->f[fm->cur].help, base | A_DIM);
    draw_text(ui, win, h - 2, 2, w - 4,
              fm->f[fm->cur].kind == FORM_CHOICE
                  ? "Left/Right change   Tab next   Enter submit   Esc cancel"
                  : "Tab/S-Tab move   Enter submit   Esc cancel",
              base);
    wnoutrefresh(win);
}

void form_open(struct ui *ui, const char *title, const struct form_field *fields, size_t n,
               form_submit_fn submit, void *ud)
{
    struct form *fm = calloc(1, sizeof(*fm));
    if (!fm || n == 0) {
        free(fm);
        ui_set_error(ui, "out of memory");
        return;
    }
    snprintf(fm->title, sizeof(fm->title), "%s", title);
    fm->n = n > FORM_MAX_FIELDS ? FORM_MAX_FIELDS : n;
    for (size_t i = 0; i < fm->n; i++) {
        struct form_entry *e = &fm->f[i];
        const struct form_field *f = &fields[i];
        snprintf(e->label, sizeof(e->label), "%s", f->label);
        e->kind = f->kind;
        e->help = f->help;
        if (f->kind == FORM_CHOICE && f->choices && f->choices[0]) {
            e->choices = f->choices;
            while (f->choices[e->nchoices])
                e->nchoices++;
            for (size_t c = 0; f->value && c < e->nchoices; c++)
                if (strcmp(f->choices[c], f->value) == 0)
                    e->choice = c;
        } else {
            e->kind = FORM_TEXT;
            snprintf(e->text, sizeof(e->text), "%s", f->value ? f->value : "");
            e->len = strlen(e->text);
        }
    }
    fm->submit = submit;
    fm->ud = ud;
    fm->bad = -1;
    ui_modal_open(ui, &form_modal, fm);
}
