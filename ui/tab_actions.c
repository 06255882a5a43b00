/* The Actions tab: the selected session's timeline (view_actions.c is the list); Enter shows
 * the selected action whole (page_action.c). */
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

static unsigned tab_actions_show(struct ui *ui)
{
    return ui->sel_action > 0 ? page_action_show(ui, ui->sel_action) : 0;
}

static const struct ui_key tab_actions_keys[] = {
    {.key = '\n',
     .name = "Enter",
     .help = "show the action whole: risk, approval, diff, the whole observation",
     .fn = tab_actions_show,
     .hint = "Enter details"},
    {.key = KEY_ENTER, .name = "Enter", .help = "show the action whole", .fn = tab_actions_show},
    {0},
};

const struct ui_page tab_actions = {
    .name = "Actions",
    .keys = tab_actions_keys,
    .list = UI_LIST_ACTIONS,
    .open = tab_actions_open,
    .close = tab_actions_close,
    .draw = tab_actions_draw,
};
