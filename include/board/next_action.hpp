#pragma once
// Deciding is pure too (spec §1, §7): what the orchestrator should do for one ticket now,
// and in what order tickets are taken. The orchestrator executes these values; it holds no
// rules of its own.

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace board {

/// board.yaml's `handoffs.<kind>` and `reviewers.<kind>`: how long one kind of handoff may wait
/// on a person before the board reminds them or escalates it, and who it is for.
struct HandoffPolicy {
    UnixMillis remind_after_ms = 0;    ///< 0: never; else after it, and again every as long
    UnixMillis escalate_after_ms = 0;  ///< 0: never; else once, after it
    std::vector<std::string> escalate_to;
    std::vector<std::string> reviewers;  ///< who decides it; empty: anyone
    friend bool operator==(const HandoffPolicy&, const HandoffPolicy&) = default;
};

/// The board policy of board.yaml that decisions depend on (spec/storage.md defaults).
struct Policy {
    bool auto_research = true;
    bool auto_planning = false;
    /// Per column, the most tickets it may hold at once; 0 = unlimited.
    std::array<int, all_statuses.size()> wip{0, 3, 0, 2, 2, 0, 0};
    Gate research_gate = Gate::none;
    Gate planning_gate = Gate::approval;
    int max_iterations = 10;
    int max_attempts = 3;
    double max_cost_usd = 10.0;  ///< 0 = unlimited
    bool review_agent = true;
    UnixMillis retry_backoff_ms = 10'000;  ///< doubled per failed attempt
    UnixMillis retry_backoff_max_ms = 300'000;
    /// Per awaiting kind (all_awaitings order): none by default.
    std::array<HandoffPolicy, all_awaitings.size()> handoffs{};

    const HandoffPolicy& handoff(Awaiting a) const { return handoffs[static_cast<std::size_t>(a)]; }

    int wip_limit(Status s) const { return wip[static_cast<std::size_t>(s)]; }

    /// The limits a run in `phase` is started under (carried on its `run-started`).
    RunPolicy run_policy(Status phase) const;

    friend bool operator==(const Policy&, const Policy&) = default;
};

/// What next_action needs to know about the rest of the board.
struct BoardFacts {
    /// How many tickets each column holds now.
    std::array<int, all_statuses.size()> in_status{};
    /// How many agent runs are in flight in each column now.
    std::array<int, all_statuses.size()> runs_in_status{};
    /// Every ticket in `blocked_by` is done.
    bool blockers_done = true;
};

/// Nothing to do for this ticket now, and why.
enum class IdleReason : std::uint8_t {
    done,
    epic,           ///< epics are containers; never run
    run_in_flight,  ///< wait for its run to finish
    blocked,        ///< a `blocked_by` ticket is not done
    auto_off,       ///< backlog/ready and the auto flag is off: a human starts it
    wip_limit,      ///< the column it would enter is full, or its agents are all busy
    /// Reserved: the budget is enforced when a run finishes (it escalates), so that a human
    /// who approves the escalation grants the agent another run instead of a silent stall.
    budget_exhausted,
};
std::string_view to_string(IdleReason);

struct Idle {
    IdleReason reason = IdleReason::done;
    friend bool operator==(const Idle&, const Idle&) = default;
};

/// A human must act; the orchestrator skips the ticket (never waits on it).
struct AwaitHuman {
    Awaiting awaiting = Awaiting::work;
    friend bool operator==(const AwaitHuman&, const AwaitHuman&) = default;
};

/// Launch the agent of `phase`, not before `not_before` (retry backoff).
struct StartRun {
    Status phase = Status::research;
    int attempt = 1;
    int iteration = 1;
    UnixMillis not_before = 0;
    RunPolicy policy;
    friend bool operator==(const StartRun&, const StartRun&) = default;
};

/// Ship a done ticket's branch as board.yaml's `ship.policy` says, then record `shipped` (or
/// `ship-failed`).
struct Ship {
    std::string branch;
    friend bool operator==(const Ship&, const Ship&) = default;
};

using Action = std::variant<Idle, AwaitHuman, StartRun, Ship>;

Action next_action(const TicketSummary& ticket, const Policy& policy, const BoardFacts& facts = {});

/// The earliest `timeout_at` among pending questions, when the daemon must wake for it.
std::optional<UnixMillis> next_question_deadline(const Ticket& ticket);

/// Ids of pending questions whose timeout has passed at `now`: each is owed a timeout event.
std::vector<std::string> questions_due(const Ticket& ticket, UnixMillis now);

/// When a reminder or an escalation of the ticket's handoff falls due under `policy`, the
/// earliest of the two; nullopt when none ever will (the agent's turn, or no service level).
std::optional<UnixMillis> next_handoff_deadline(const TicketSummary& ticket, const Policy& policy);

/// The events the board owes the ticket's handoff at `now` (`handoff-reminded`,
/// `handoff-escalated`), in that order; one reminder however long it has waited.
std::vector<Payload> handoff_events_due(const TicketSummary& ticket,
                                        const Policy& policy,
                                        UnixMillis now);

/// Whether the ticket's request is for `person`: it awaits a kind whose `reviewers` name
/// them or name no one, or it was escalated to them.
bool is_for(const TicketSummary& ticket, const Policy& policy, std::string_view person);

/// How a ticket relates to an epic, for ordering (spec §7).
enum class EpicState : std::uint8_t {
    none,       ///< no parent: a standalone ticket
    in_flight,  ///< its epic has work in flight (momentum)
    open,       ///< its epic is not done, nothing in flight
    done,       ///< its epic is done: an orphan
};

/// The sort key of `next` order: priority, epic group, age, id.
struct QueueKey {
    int priority = 2;
    EpicState epic = EpicState::none;
    UnixMillis created_at = 0;
    std::string_view id;
};

QueueKey queue_key(const TicketSummary& ticket, EpicState epic);

/// Strict weak order: true if `a` is taken before `b`.
bool comes_before(const QueueKey& a, const QueueKey& b);

/// Orders ids by prefix, then number as a number (`PROJ-2` before `PROJ-10`).
bool id_less(std::string_view a, std::string_view b);

}  // namespace board
