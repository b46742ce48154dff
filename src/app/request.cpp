// What a person is asked: derived from the ticket alone, so every front end (and the notify
// payload) says the same thing.

#include <board/app.hpp>
#include <board/codec.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace board::app {
namespace {

/// The artifact a person judges when a ticket waits at `status`: the review-prep agent's
/// review, else the implementation log, in review; the phase's own elsewhere.
std::optional<Artifact> artifact_to_judge(const Ticket& t) {
    if (t.status == Status::review) {
        if (const auto& review = t.artifact(ArtifactKind::review)) return review;
        return t.artifact(ArtifactKind::implementation_log);
    }
    if (const auto kind = artifact_of(t.status)) return t.artifact(*kind);
    return std::nullopt;
}

}  // namespace

std::vector<std::string> handoff_chases(const TicketSummary& t) {
    std::vector<std::string> out;
    if (t.reminders > 0)
        out.push_back(fmt::format("reminded {} time{}", t.reminders, t.reminders == 1 ? "" : "s"));
    if (t.escalated_at != 0)
        out.push_back(t.escalated_to.empty()
                          ? std::string{"escalated"}
                          : fmt::format("escalated to {}", fmt::join(t.escalated_to, ", ")));
    return out;
}

std::optional<HumanRequest> request_of(const Ticket& t) {
    if (!t.awaiting) return std::nullopt;
    HumanRequest r;
    r.kind = *t.awaiting;
    r.handoff = t.handoff;
    r.since = t.awaiting_since ? t.awaiting_since : t.updated_at;
    // The newest note by an agent or the board since the phase began says why it waits.
    for (auto it = t.notes.rbegin(); it != t.notes.rend() && it->at >= t.phase_started_at; ++it) {
        if (it->from == ActorKind::human) continue;
        r.asked_by = it->author.empty() ? std::string{to_string(it->from)}
                                        : fmt::format("{}:{}", to_string(it->from), it->author);
        r.words = it->text;
        break;
    }
    for (const auto& q : t.questions)
        if (q.status == QuestionStatus::pending) r.questions.push_back(q);
    if (r.kind == Awaiting::approval || r.kind == Awaiting::review || r.kind == Awaiting::content ||
        r.kind == Awaiting::checkpoint)
        r.artifact = artifact_to_judge(t);

    if (t.handoff == Handoff::question && !r.questions.empty()) {
        for (const auto& q : r.questions)
            r.commands.push_back(fmt::format("board answer {}.{} VALUE", t.id, q.id));
        return r;
    }
    switch (r.kind) {
        case Awaiting::input:
            r.commands.push_back(fmt::format("board approve {} \"the answer\"", t.id));
            break;
        case Awaiting::checkpoint:
            r.commands.push_back(fmt::format("board approve {}   (continue)", t.id));
            r.commands.push_back(fmt::format("board reject {} \"what to redo\"", t.id));
            break;
        case Awaiting::work:
            r.commands.push_back(fmt::format("board approve {}   (it is done)", t.id));
            r.commands.push_back(
                fmt::format("board update {} --awaiting none   (give it back to the agent)", t.id));
            break;
        default:
            r.commands.push_back(fmt::format("board approve {} [NOTE]", t.id));
            r.commands.push_back(fmt::format("board reject {} \"feedback\"", t.id));
            break;
    }
    return r;
}

std::string request_json(const HumanRequest& r) {
    boost::json::object o;
    o["kind"] = to_string(r.kind);
    o["handoff"] = to_string(r.handoff);
    o["asked_by"] = r.asked_by;
    o["words"] = r.words;
    boost::json::array questions;
    for (const auto& q : r.questions) {
        boost::json::object item;
        item["id"] = q.id;
        item["text"] = q.question;
        item["kind"] = to_string(q.kind);
        item["response_type"] = to_string(q.response_type);
        boost::json::array options;
        for (const auto& option : q.options)
            options.push_back(
                boost::json::object{{"id", option.id},
                                    {"label", option.label.empty() ? option.id : option.label},
                                    {"value", option.value.empty() ? option.id : option.value}});
        item["options"] = std::move(options);
        if (q.default_response) item["default"] = *q.default_response;
        questions.push_back(std::move(item));
    }
    o["questions"] = std::move(questions);
    if (r.artifact)
        o["artifact"] = boost::json::object{{"path", r.artifact->path},
                                            {"status", to_string(r.artifact->status)},
                                            {"summary", r.artifact->summary}};
    o["since"] = format_timestamp(r.since);
    boost::json::array commands;
    for (const auto& c : r.commands) commands.emplace_back(c);
    o["commands"] = std::move(commands);
    return boost::json::serialize(o);
}

}  // namespace board::app
