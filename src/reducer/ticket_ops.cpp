#include "reducer/ticket_ops.hpp"

#include "reducer/rules.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <type_traits>

namespace board::ops {

std::string format_usd(double amount) {
    // to_chars, not to_string: the text must not depend on the process's locale.
    std::array<char, 64> buffer{};
    const auto [end, ec] = std::to_chars(
        buffer.data(), buffer.data() + buffer.size(), amount, std::chars_format::fixed, 2);
    if (ec != std::errc{}) return "?";
    return "$" + std::string(buffer.data(), end);
}

std::string cat(std::initializer_list<std::string_view> parts) {
    std::size_t size = 0;
    for (auto p : parts) size += p.size();
    std::string out;
    out.reserve(size);
    for (auto p : parts) out += p;
    return out;
}

Rejection reject(RejectReason reason, std::initializer_list<std::string_view> parts) {
    return Rejection{reason, cat(parts)};
}

void add_note(Ticket& t, const Actor& by, std::string text, UnixMillis at) {
    t.notes.push_back(Note{by.kind, by.name, std::move(text), at});
}

void add_system_note(Ticket& t, std::string text, UnixMillis at) {
    t.notes.push_back(Note{ActorKind::system, {}, std::move(text), at});
}

void enter(Ticket& t, Status status, UnixMillis at) {
    if (t.status == status) return;
    t.status = status;
    t.phase_attempts = 0;
    t.phase_iterations = 0;
    t.phase_started_at = at;
    t.last_failure_at.reset();
}

void await_human(Ticket& t, Awaiting awaiting, Handoff handoff) {
    t.awaiting = awaiting;
    t.handoff = handoff;
}

void release_to_agent(Ticket& t) {
    // §6: a blocking question holds the ticket until it is answered, whatever else a human
    // decides meanwhile (a gate passed, a ticket released).
    const auto holding =
        std::find_if(unsettled_questions(t), t.questions.end(), [](const Question& q) {
            return q.status == QuestionStatus::pending && q.kind != QuestionKind::non_blocking;
        });
    if (holding != t.questions.end()) {
        await_human(t,
                    holding->kind == QuestionKind::approval ? Awaiting::approval : Awaiting::input,
                    Handoff::question);
        return;
    }
    t.awaiting.reset();
    t.handoff = Handoff::signal;
}

void escalate(Ticket& t, std::string why, UnixMillis at) {
    await_human(t, Awaiting::escalation, Handoff::system);
    add_system_note(t, std::move(why), at);
}

void close(Ticket& t, Resolution resolution, UnixMillis at) {
    enter(t, Status::done, at);
    t.resolution = resolution;
    // Work on a branch that is done is owed its shipping; work given up is not.
    t.ship_owed = resolution == Resolution::completed && !t.branch.empty() && !t.shipped;
    for (auto q = unsettled_questions(t); q != t.questions.end(); ++q) {
        if (q->status == QuestionStatus::pending) q->status = QuestionStatus::cancelled;
    }
    release_to_agent(t);
}

Awaiting review_gate(const Ticket& t) {
    return t.requires_.value_or(Awaiting::review);
}

void complete_phase(Ticket& t, Gate gate, bool review_agent, UnixMillis at) {
    switch (t.status) {
        case Status::research:
        case Status::planning:
            if (gate == Gate::none) {
                advance(t, at);
            } else {
                await_human(t,
                            gate == Gate::approval ? Awaiting::approval : Awaiting::checkpoint,
                            Handoff::gate);
            }
            return;
        case Status::implementing:
            enter(t, Status::review, at);
            if (!review_agent) await_human(t, review_gate(t), Handoff::gate);
            return;
        case Status::review:
            await_human(t, review_gate(t), Handoff::gate);
            return;
        default:
            return;  // backlog, ready, done have no artifact to complete
    }
}

void advance(Ticket& t, UnixMillis at) {
    release_to_agent(t);
    const Status next = rules::advance_to[static_cast<std::size_t>(t.status)];
    if (next == Status::done) {
        close(t, Resolution::completed, at);
    } else {
        enter(t, next, at);
    }
}

void reject_artifact(Ticket& t, Status phase, UnixMillis at) {
    const auto kind = artifact_of(phase);
    if (!kind) return;
    if (auto& artifact = t.artifact(*kind); artifact) {
        artifact->status = ArtifactStatus::rejected;
        artifact->updated_at = at;
    }
}

void fail_attempt(Ticket& t, std::string why, int max_attempts, UnixMillis at) {
    ++t.phase_attempts;
    t.last_failure_at = at;
    if (t.phase_attempts >= max_attempts) {
        escalate(t,
                 cat({to_string(t.status),
                      " failed ",
                      std::to_string(t.phase_attempts),
                      " attempt(s), the limit; last error: ",
                      why}),
                 at);
    } else {
        add_system_note(t, std::move(why), at);
    }
}

bool has_pending_blocking_question(Ticket& t) {
    return std::any_of(unsettled_questions(t), t.questions.end(), [](const Question& q) {
        return q.status == QuestionStatus::pending && q.kind != QuestionKind::non_blocking;
    });
}

std::vector<Question>::iterator unsettled_questions(Ticket& t) {
    const auto first = t.question_index.first_unsettled(t.questions);
    return t.questions.begin() + static_cast<std::ptrdiff_t>(first);
}

Question* find_question(Ticket& t, std::string_view id) {
    return t.question_index.find(t.questions, id);
}

std::optional<Rejection> check_ids(std::string_view self,
                                   std::string_view field,
                                   const std::vector<std::string>& ids) {
    for (const auto& id : ids) {
        if (!is_valid_ticket_id(id)) {
            return reject(RejectReason::invalid_field,
                          {field, ": \"", id, "\" is not a ticket id (expected PREFIX-N)"});
        }
        if (id == self) {
            return reject(RejectReason::invalid_field,
                          {field, ": ", self, " cannot refer to itself"});
        }
    }
    return std::nullopt;
}

std::optional<Rejection> check_labels(const std::vector<std::string>& labels) {
    const bool any_empty =
        std::any_of(labels.begin(), labels.end(), [](const auto& l) { return l.empty(); });
    if (any_empty) return reject(RejectReason::invalid_field, {"labels: a label cannot be empty"});
    return std::nullopt;
}

std::optional<Rejection> check_priority(int priority) {
    if (priority >= 0 && priority <= 4) return std::nullopt;
    return reject(
        RejectReason::invalid_field,
        {"priority: ", std::to_string(priority), " is out of range (0 critical … 4 backlog)"});
}

}  // namespace board::ops

namespace board::detail {

// Tickets are moved through reduce() and grown in vectors on every replay: a throwing move
// would turn those moves into copies of the whole history.
static_assert(std::is_nothrow_move_constructible_v<Ticket> &&
              std::is_nothrow_move_assignable_v<Ticket>);

void QuestionIndex::check(const std::vector<Question>& questions) noexcept {
    if (questions.data() != buffer_ || questions.size() < std::max(indexed_, settled_)) {
        reset();
        buffer_ = questions.data();
    }
}

Question* QuestionIndex::find(std::vector<Question>& questions, std::string_view id) {
    // A few questions are cheaper to scan than to hash, and a ticket copied for one event
    // would build an index it never uses again. From the back: answers and timeouts concern
    // recent questions, and with duplicate ids (a hand-edited snapshot) the last one wins.
    constexpr std::size_t scan_below = 16;
    check(questions);
    if (questions.size() < scan_below) {
        const auto it = std::find_if(
            questions.rbegin(), questions.rend(), [&](const Question& q) { return q.id == id; });
        return it == questions.rend() ? nullptr : &*it;
    }
    for (; indexed_ < questions.size(); ++indexed_)
        positions_.insert_or_assign(questions[indexed_].id, indexed_);
    const auto it = positions_.find(id);
    return it == positions_.end() ? nullptr : &questions[it->second];
}

std::size_t QuestionIndex::first_unsettled(const std::vector<Question>& questions) {
    check(questions);
    while (settled_ < questions.size() && questions[settled_].status != QuestionStatus::pending)
        ++settled_;
    return settled_;
}

}  // namespace board::detail
