#pragma once
// The board-wide queries (`list`, `next`, `ready`, `questions`) and the human moves on one
// ticket (`approve`, `reject`, `note`, `answer`, `update`, `start`, `move`, `cancel`,
// `reopen`, `fork`). Each returns what to print and the exit code (spec/cli.md: 0 done,
// 1 refused / unknown id / nothing next, 2 usage, 3 storage) instead of printing, so tests
// call them directly. Writes go through board::transact (the reducer decides under the
// ticket's lock; nothing is written on a refusal) and then refresh the ticket's snapshot.

#include "cli/write_commands.hpp"

#include <board/catalog.hpp>
#include <board/ticket.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace board::cli {

/// What every command knows: the board, who acts, and how to print.
struct Context {
    std::filesystem::path board;
    Actor by;             ///< invoking_actor(): `human:<name>`, or the agent inside a run
    bool json = false;    ///< machine output on stdout
    bool colour = false;  ///< ANSI colour in tables
    /// The process ends after this one command (the `board` executable, not a server calling
    /// the commands): a loaded board may then be left to the exit, and the heap readied for
    /// it (prepare_heap_for_board in query_commands.cpp).
    bool one_shot = false;
};

/// `work,approval` → the types; nullopt if any name is not an awaiting type. Empty text is
/// the empty list (any type).
std::optional<std::vector<Awaiting>> parse_awaiting_list(const std::string& text);
/// `backlog,review` → the statuses; nullopt if any is unknown.
std::optional<std::vector<Status>> parse_status_list(const std::string& text);

/// A comma-separated flag value: `a, b,,c` → a, b, c (spaces around an item are not part of
/// it, so `-l "x, y"` is the labels x and y).
std::vector<std::string> split_list(const std::string& text);
/// A person's name for `--as`: non-empty, printable, no spaces, no `:` (it becomes
/// `human:<name>`).
bool is_valid_actor_name(const std::string& name);

CommandOutcome list_tickets(const Context& ctx, const ListFilter& filter);
CommandOutcome ready_tickets(const Context& ctx, const NextFilter& filter);

struct NextRequest {
    NextFilter filter;
    bool human = false;           ///< `--awaiting`: the human side
    std::vector<Awaiting> types;  ///< with `human`: only these (empty: any)
};

/// The agent's next ticket (or with `human` the next one for a person). Prints the whole
/// ticket (`--json`: the ticket or `null`); exit 1 when there is none.
CommandOutcome next_ticket(const Context& ctx, const NextRequest& request);

/// Agent questions, ids shown as `PROJ-12.q1`; `pending_only` hides answered ones.
CommandOutcome list_questions(const Context& ctx, bool pending_only);

CommandOutcome approve(const Context& ctx, const std::string& id, const std::string& note);
CommandOutcome reject(const Context& ctx, const std::string& id, const std::string& feedback);
/// `from_human` false: the note is the agent's (the seeds' default).
CommandOutcome add_note(const Context& ctx,
                        const std::string& id,
                        const std::string& text,
                        bool from_human);
/// `qid` is `PROJ-12.q1`.
CommandOutcome answer(const Context& ctx,
                      const std::string& qid,
                      const std::string& value,
                      const std::string& note);

/// `update` flags as given; absent = unchanged. `requires_`/`awaiting` take a type or `none`.
struct UpdateRequest {
    std::optional<std::string> title, description;
    std::optional<int> priority;
    std::optional<std::vector<std::string>> labels;
    std::optional<std::string> parent;
    std::optional<std::vector<std::string>> blocked_by;
    std::optional<std::string> requires_;
    std::optional<std::string> awaiting;
};

CommandOutcome update(const Context& ctx, const std::string& id, const UpdateRequest& request);

CommandOutcome start(const Context& ctx, const std::string& id);
CommandOutcome move(const Context& ctx,
                    const std::string& id,
                    const std::string& status,
                    const std::string& reason);
CommandOutcome cancel(const Context& ctx, const std::string& id, const std::string& reason);
CommandOutcome reopen(const Context& ctx, const std::string& id, const std::string& reason);
/// A new ticket whose log is the first `at_seq` events of `id`'s and a `forked` marker.
CommandOutcome fork(const Context& ctx, const std::string& id, std::int64_t at_seq);

}  // namespace board::cli
