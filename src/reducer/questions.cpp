// Structured questions (§6): asked by an agent, answered by a human or timed out by the
// daemon. Time is virtual: deadlines are computed from event `at` values only.

#include "reducer/handlers.hpp"
#include "reducer/rules.hpp"
#include "reducer/ticket_ops.hpp"

#include <algorithm>
#include <string>

namespace board {
namespace {

using ops::cat;
using ops::reject;

std::string_view describe_status(QuestionStatus s) {
    switch (s) {
        case QuestionStatus::answered:
            return "was already answered";
        case QuestionStatus::timed_out:
            return "timed out";
        case QuestionStatus::cancelled:
            return "was cancelled";
        case QuestionStatus::pending:
            return "is pending";
    }
    return "is not pending";
}

const QuestionOption* find_option(const Question& q, std::string_view value) {
    const auto it = std::find_if(q.options.begin(), q.options.end(), [&](const QuestionOption& o) {
        return o.id == value || o.value == value || o.label == value;
    });
    return it == q.options.end() ? nullptr : &*it;
}

/// The stored form of a valid answer: a choice is stored as its option's value.
std::string canonical_answer(const Question& q, std::string_view value) {
    if (q.response_type == ResponseType::choice) {
        if (const auto* option = find_option(q, value))
            return option->value.empty() ? option->id : option->value;
    }
    return std::string{value};
}

/// The ticket goes back to the agent once no blocking question holds it.
void release_if_unblocked(Ticket& t) {
    if (t.awaiting && t.handoff == Handoff::question && !ops::has_pending_blocking_question(t))
        ops::release_to_agent(t);
}

}  // namespace

std::optional<std::string> answer_error(const Question& q, std::string_view value) {
    switch (q.response_type) {
        case ResponseType::text:
            if (value.empty()) return std::string{"the answer is empty"};
            return std::nullopt;
        case ResponseType::boolean:
            if (value == "true" || value == "false") return std::nullopt;
            return cat({"expected true or false, got \"", value, "\""});
        case ResponseType::approval:
            if (value == "approve" || value == "reject") return std::nullopt;
            return cat({"expected approve or reject, got \"", value, "\""});
        case ResponseType::choice: {
            if (find_option(q, value)) return std::nullopt;
            std::string choices;
            for (const auto& o : q.options) {
                if (!choices.empty()) choices += ", ";
                choices += o.value.empty() ? o.id : o.value;
            }
            return cat({"\"", value, "\" is not one of the options: ", choices});
        }
    }
    return std::string{"unknown response type"};
}

std::optional<UnixMillis> question_timeout_at(QuestionKind kind,
                                              std::optional<int> minutes,
                                              UnixMillis asked_at) {
    const auto chosen = minutes ? minutes : rules::default_timeout_minutes(kind);
    if (!chosen) return std::nullopt;
    const int clamped = std::clamp(*chosen, rules::min_timeout_minutes, rules::max_timeout_minutes);
    return asked_at + UnixMillis{clamped} * 60'000;
}

namespace handlers {

Outcome apply(Ticket& t, const Event& e, const QuestionAsked& q) {
    if (e.by.kind == ActorKind::human) {
        return reject(RejectReason::invalid_field,
                      {"question-asked: questions come from agents; a human adds a note"});
    }
    if (t.status == Status::done) {
        return reject(RejectReason::wrong_status, {t.id, " is done: no question can be asked"});
    }
    if (q.question_id.empty() || q.question.empty()) {
        return reject(RejectReason::invalid_field,
                      {"question-asked: the id and text are required"});
    }
    if (ops::find_question(t, q.question_id)) {
        return reject(RejectReason::invalid_field,
                      {"question-asked: ", t.id, " already has a question ", q.question_id});
    }
    if (q.response_type == ResponseType::choice && q.options.empty()) {
        return reject(RejectReason::invalid_field, {"question-asked: a choice needs options"});
    }
    Question question;
    question.id = q.question_id;
    question.question = q.question;
    question.kind = q.kind;
    question.response_type = q.response_type;
    question.options = q.options;
    question.context = q.context;
    question.default_response = q.default_response;
    question.asked_at = e.at;
    question.timeout_at = question_timeout_at(q.kind, q.timeout_minutes, e.at);
    if (question.default_response) {
        if (auto bad = answer_error(question, *question.default_response)) {
            return reject(RejectReason::invalid_field, {"question-asked: defaultResponse: ", *bad});
        }
    }
    t.questions.push_back(std::move(question));
    if (q.kind != QuestionKind::non_blocking && !t.awaiting) {
        ops::await_human(t,
                         q.kind == QuestionKind::approval ? Awaiting::approval : Awaiting::input,
                         Handoff::question);
    }
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const QuestionAnswered& a) {
    if (e.by.kind != ActorKind::human) {
        return reject(RejectReason::not_human,
                      {"only a human can answer question ",
                       t.id,
                       ".",
                       a.question_id,
                       " (this event is by ",
                       to_string(e.by),
                       ")"});
    }
    Question* q = ops::find_question(t, a.question_id);
    if (!q) {
        return reject(RejectReason::unknown_question, {t.id, " has no question ", a.question_id});
    }
    if (q->status != QuestionStatus::pending) {
        return reject(RejectReason::question_not_pending,
                      {"question ", t.id, ".", q->id, " ", describe_status(q->status)});
    }
    if (auto bad = answer_error(*q, a.value)) {
        return reject(RejectReason::invalid_answer, {"answer to ", t.id, ".", q->id, ": ", *bad});
    }
    q->status = QuestionStatus::answered;
    q->answer = canonical_answer(*q, a.value);
    q->answered_by = e.by;
    q->answered_at = e.at;
    std::string note = cat({"Answer to ", q->id, " (", q->question, "): ", q->answer});
    if (!a.note.empty()) note = cat({note, "\n", a.note});
    ops::add_note(t, e.by, std::move(note), e.at);
    release_if_unblocked(t);
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const QuestionCancelled& c) {
    if (e.by.kind != ActorKind::human) {
        return reject(
            RejectReason::not_human,
            {"question-cancelled: only a person withdraws a question, not ", to_string(e.by)});
    }
    Question* q = ops::find_question(t, c.question_id);
    if (!q)
        return reject(RejectReason::unknown_question, {t.id, " has no question ", c.question_id});
    if (q->status != QuestionStatus::pending) {
        return reject(RejectReason::question_not_pending,
                      {"question ", t.id, ".", q->id, " ", describe_status(q->status)});
    }
    q->status = QuestionStatus::cancelled;
    ops::add_note(t,
                  e.by,
                  cat({"Question ",
                       q->id,
                       " withdrawn: ",
                       q->question,
                       c.reason.empty() ? "" : "\n",
                       c.reason}),
                  e.at);
    release_if_unblocked(t);
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const QuestionTimedOut& qt) {
    if (e.by.kind != ActorKind::system) {
        return reject(
            RejectReason::not_human,
            {"question-timed-out: only the board times questions out, not ", to_string(e.by)});
    }
    Question* q = ops::find_question(t, qt.question_id);
    if (!q)
        return reject(RejectReason::unknown_question, {t.id, " has no question ", qt.question_id});
    if (q->status != QuestionStatus::pending) {
        return reject(RejectReason::question_not_pending,
                      {"question ", t.id, ".", q->id, " ", describe_status(q->status)});
    }
    if (!q->timeout_at || e.at < *q->timeout_at) {
        return reject(
            RejectReason::not_due,
            {"question ", t.id, ".", q->id, q->timeout_at ? " is not due yet" : " has no timeout"});
    }
    if (q->default_response) {
        q->status = QuestionStatus::answered;
        q->answer = canonical_answer(*q, *q->default_response);
        q->answered_by = Actor{ActorKind::system, {}};
        q->answered_at = e.at;
        ops::add_system_note(
            t,
            cat({"Question ", q->id, " timed out; answered with the default: ", q->answer}),
            e.at);
        release_if_unblocked(t);
        return std::nullopt;
    }
    q->status = QuestionStatus::timed_out;
    const bool holds_ticket = q->kind != QuestionKind::non_blocking;
    const std::string why = cat({"question ", q->id, " timed out with no answer: ", q->question});
    // Escalate only when the question is what the ticket waits for: not over another human
    // handoff, and not over an agent that is running meanwhile.
    if (holds_ticket && (t.handoff == Handoff::question || (!t.awaiting && !t.run))) {
        ops::escalate(t, why, e.at);
    } else {
        ops::add_system_note(t, why, e.at);
    }
    return std::nullopt;
}

}  // namespace handlers
}  // namespace board
