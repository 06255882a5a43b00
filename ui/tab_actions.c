/* The Actions tab: the selected session's timeline (view_actions.c is the list); Enter shows
 * the selected action whole (page_action.c); y and n decide a pending one as the queue does
 * (view_approvals.c: the same guard, the same reason prompt). */
#include "ui/ui_internal.h"

#include <string.h>

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

/* The selected action's id when it waits for approval; otherwise 0, said in the footer. */
static long long tab_actions_pending(struct ui *ui)
{
    ssize_t at = ui->sel_action > 0 ? model_find_action(&ui->model, ui->sel_action) : -1;
    if (at < 0)
        return 0;
    const struct model_action *a = &ui->model.actions[at];
    if (!a->approval || strcmp(a->approval, "pending") != 0) {
        ui_set_status(ui, "action %lld does not wait for approval", a->id);
        return 0;
    }
    return a->id;
}

static unsigned tab_actions_approve(struct ui *ui)
{
    long long id = tab_actions_pending(ui);
    return id ? view_approvals_key_approve(ui, ui_engine_index(ui, ui->sel_session), id)
              : UI_DIRTY_FOOTER;
}

static unsigned tab_actions_reject(struct ui *ui)
{
    long long id = tab_actions_pending(ui);
    return id ? view_approvals_key_reject(ui, ui_engine_index(ui, ui->sel_session), id)
              : UI_DIRTY_FOOTER;
}

static const struct ui_key tab_actions_keys[] = {
    {.key = 'y',
     .name = "y",
     .help = "approve the selected action when it waits (it runs now)",
     .fn = tab_actions_approve,
     .hint = "y approve",
     .mutates = true},
    {.key = 'n',
     .name = "n",
     .help = "reject the selected action when it waits (with an optional reason)",
     .fn = tab_actions_reject,
     .hint = "n reject",
     .mutates = true},
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
    .short_name = "Act",
    .keys = tab_actions_keys,
    .list = UI_LIST_ACTIONS,
    .open = tab_actions_open,
    .close = tab_actions_close,
    .draw = tab_actions_draw,
};
