#ifndef HOSTSCOPE_CLIBEDIT_SHIM_H
#define HOSTSCOPE_CLIBEDIT_SHIM_H

#include <stdio.h>
#include <histedit.h>

// el_wset, el_wget and history_w are variadic and therefore not callable from Swift. Each typed wrapper
// below fixes the arguments of one operation.

typedef wchar_t *(*hostscope_el_prompt_function)(EditLine *);
typedef unsigned char (*hostscope_el_key_function)(EditLine *, int);

static inline int hostscope_el_set_prompt(EditLine *editor, hostscope_el_prompt_function prompt) {
    return el_wset(editor, EL_PROMPT, prompt);
}
static inline int hostscope_el_set_editor(EditLine *editor, const wchar_t *name) {
    return el_wset(editor, EL_EDITOR, name);
}
static inline int hostscope_el_set_read_function(EditLine *editor, el_rfunc_t function) {
    return el_wset(editor, EL_GETCFN, function);
}
static inline int hostscope_el_set_client_data(EditLine *editor, void *data) {
    return el_wset(editor, EL_CLIENTDATA, data);
}
static inline void *hostscope_el_client_data(EditLine *editor) {
    void *data = NULL;
    el_wget(editor, EL_CLIENTDATA, &data);
    return data;
}
static inline int hostscope_el_add_function(EditLine *editor, const wchar_t *name, const wchar_t *help,
                                            hostscope_el_key_function function) {
    return el_wset(editor, EL_ADDFN, name, help, function);
}
/// Binds a key sequence as the `bind` command of editrc(5) writes it (`^C`, `\e[200~`) to a function by name.
static inline int hostscope_el_bind(EditLine *editor, const wchar_t *keys, const wchar_t *function) {
    return el_wset(editor, EL_BIND, keys, function, (const wchar_t *)NULL);
}
/// One `setty -d` setting (`-isig`): the terminal mode while a line is edited.
static inline int hostscope_el_set_edit_mode_tty(EditLine *editor, const wchar_t *setting) {
    return el_wset(editor, EL_SETTY, L"-d", setting, (const wchar_t *)NULL);
}
static inline int hostscope_el_set_history(EditLine *editor, HistoryW *history) {
    return el_wset(editor, EL_HIST, history_w, history);
}
static inline int hostscope_el_refresh(EditLine *editor) {
    return el_wset(editor, EL_REFRESH);
}

static inline int hostscope_history_set_size(HistoryW *history, int size) {
    HistEventW event;
    return history_w(history, &event, H_SETSIZE, size);
}
static inline int hostscope_history_set_unique(HistoryW *history, int unique) {
    HistEventW event;
    return history_w(history, &event, H_SETUNIQUE, unique);
}
static inline int hostscope_history_enter(HistoryW *history, const wchar_t *line) {
    HistEventW event;
    return history_w(history, &event, H_ENTER, line);
}

#endif
