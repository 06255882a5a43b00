/* The Actions tab: the selected session's timeline (view_actions.c is the list). */
#include "ui/ui_internal.h"

static unsigned tab_actions_open(struct ui *ui)
{
    (void)ui;
    return UI_DIRTY_DETAIL; /* ui_select_session fetches the actions for every tab */
}

static void tab_actions_close(struct ui *ui)
{
    (void)ui;
}

static void tab_actions_draw(struct ui *ui, WINDOW *w, bool focused)
{
    list_draw(ui, UI_LIST_ACTIONS, w, focused, false);
}

const struct ui_page tab_actions = {
    .name = "Actions",
    .list = UI_LIST_ACTIONS,
    .open = tab_actions_open,
    .close = tab_actions_close,
    .draw = tab_actions_draw,
};
