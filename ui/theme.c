/* Colours: the built-in themes and the state → colour mapping. The only place colours are
 * chosen; themes as files (themes/) can later fill the same struct. */
#include "ui/ui_internal.h"

#include <string.h>

#define MONO_NONE A_NORMAL

static const struct ui_theme theme_dark = {
    .name = "dark",
    .slot =
        {
            [UI_C_NORMAL] = {-1, -1, A_NORMAL, MONO_NONE},
            [UI_C_HEADER] = {COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE},
            [UI_C_HEADER_ALERT] = {COLOR_WHITE, COLOR_RED, A_BOLD, A_REVERSE | A_BOLD},
            [UI_C_FOOTER] = {COLOR_WHITE, -1, A_NORMAL, MONO_NONE},
            [UI_C_FOOTER_KEY] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
            [UI_C_FOOTER_ERROR] = {COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE},
            [UI_C_BORDER] = {COLOR_WHITE, -1, A_DIM, MONO_NONE},
            [UI_C_BORDER_FOCUS] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
            [UI_C_TITLE] = {COLOR_WHITE, -1, A_BOLD, A_BOLD},
            [UI_C_COLUMNS] = {COLOR_YELLOW, -1, A_NORMAL, A_UNDERLINE},
            [UI_C_SELECTED] = {COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE},
            [UI_C_SELECTED_BLUR] = {COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_UNDERLINE},
            [UI_C_DIM] = {COLOR_WHITE, -1, A_DIM, A_DIM},
            [UI_C_OK] = {COLOR_GREEN, -1, A_NORMAL, MONO_NONE},
            [UI_C_WARN] = {COLOR_YELLOW, -1, A_NORMAL, A_BOLD},
            [UI_C_BAD] = {COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE},
            [UI_C_INFO] = {COLOR_CYAN, -1, A_NORMAL, MONO_NONE},
            [UI_C_HELP] = {COLOR_WHITE, COLOR_BLACK, A_NORMAL, MONO_NONE},
            [UI_C_HELP_KEY] = {COLOR_YELLOW, COLOR_BLACK, A_BOLD, A_BOLD},
        },
};

static const struct ui_theme theme_light = {
    .name = "light",
    .slot =
        {
            [UI_C_NORMAL] = {-1, -1, A_NORMAL, MONO_NONE},
            [UI_C_HEADER] = {COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_REVERSE},
            [UI_C_HEADER_ALERT] = {COLOR_WHITE, COLOR_RED, A_BOLD, A_REVERSE | A_BOLD},
            [UI_C_FOOTER] = {COLOR_BLACK, -1, A_NORMAL, MONO_NONE},
            [UI_C_FOOTER_KEY] = {COLOR_BLUE, -1, A_BOLD, A_BOLD},
            [UI_C_FOOTER_ERROR] = {COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE},
            [UI_C_BORDER] = {COLOR_BLACK, -1, A_NORMAL, MONO_NONE},
            [UI_C_BORDER_FOCUS] = {COLOR_BLUE, -1, A_BOLD, A_BOLD},
            [UI_C_TITLE] = {COLOR_BLACK, -1, A_BOLD, A_BOLD},
            [UI_C_COLUMNS] = {COLOR_MAGENTA, -1, A_NORMAL, A_UNDERLINE},
            [UI_C_SELECTED] = {COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_REVERSE},
            [UI_C_SELECTED_BLUR] = {COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_UNDERLINE},
            [UI_C_DIM] = {COLOR_BLACK, -1, A_DIM, A_DIM},
            [UI_C_OK] = {COLOR_GREEN, -1, A_NORMAL, MONO_NONE},
            [UI_C_WARN] = {COLOR_MAGENTA, -1, A_NORMAL, A_BOLD},
            [UI_C_BAD] = {COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE},
            [UI_C_INFO] = {COLOR_BLUE, -1, A_NORMAL, MONO_NONE},
            [UI_C_HELP] = {COLOR_BLACK, COLOR_WHITE, A_NORMAL, MONO_NONE},
            [UI_C_HELP_KEY] = {COLOR_BLUE, COLOR_WHITE, A_BOLD, A_BOLD},
        },
};

static const struct ui_theme *const theme_list[] = {&theme_dark, &theme_light};

static attr_t theme_attrs[UI_C_COUNT];

const struct ui_theme *theme_find(const char *name)
{
    if (!name || !*name)
        return &theme_dark;
    for (size_t i = 0; i < sizeof(theme_list) / sizeof(theme_list[0]); i++)
        if (strcmp(theme_list[i]->name, name) == 0)
            return theme_list[i];
    return NULL;
}

const char *theme_names(void)
{
    return "dark, light";
}

void theme_apply(const struct ui_theme *t, bool color)
{
    bool defaults = color && use_default_colors() == OK;
    for (int i = 0; i < UI_C_COUNT; i++) {
        const struct ui_theme_slot *s = &t->slot[i];
        if (!color) {
            theme_attrs[i] = s->mono;
            continue;
        }
        short fg = s->fg, bg = s->bg;
        /* Without default-colour support, -1 means white on black. */
        if (fg < 0 && !defaults)
            fg = COLOR_WHITE;
        if (bg < 0 && !defaults)
            bg = COLOR_BLACK;
        init_pair((short)(i + 1), fg, bg);
        theme_attrs[i] = COLOR_PAIR(i + 1) | s->attr;
    }
}

attr_t theme_attr(enum ui_color c)
{
    return (c >= 0 && c < UI_C_COUNT) ? theme_attrs[c] : A_NORMAL;
}

enum ui_color theme_state_color(const char *state)
{
    static const struct {
        const char *state;
        enum ui_color color;
    } map[] = {
        /* sessions (engine/session_state.c) */
        {"building", UI_C_WARN},
        {"starting", UI_C_WARN},
        {"started", UI_C_WARN},
        {"ready", UI_C_OK},
        {"paused", UI_C_INFO},
        {"stopped", UI_C_DIM},
        {"error", UI_C_BAD},
        {"disconnected", UI_C_BAD},
        {"oom-killed", UI_C_BAD},
        {"deleted", UI_C_DIM},
        /* actions */
        {"received", UI_C_INFO},
        {"running", UI_C_WARN},
        {"done", UI_C_OK},
        {"failed", UI_C_BAD},
        {"interrupted", UI_C_BAD},
    };
    for (size_t i = 0; state && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].state, state) == 0)
            return map[i].color;
    return UI_C_NORMAL;
}
