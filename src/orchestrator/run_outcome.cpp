#include "orchestrator/run_outcome.hpp"

#include "agent_output/text.hpp"

#include <board/agent_output.hpp>
#include <board/board_config.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace board::orchestrator {
namespace {

Actor board_actor() {
    return Actor{ActorKind::system, {}};
}

std::string bullet_list(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) out += "\n- " + line;
    return out;
}

std::string next_question_id(const Ticket& t, std::size_t offset) {
    // Ids are local to the ticket and never reused: q1, q2, ...
    return "q" + std::to_string(t.questions.size() + offset + 1);
}

/// Cuts what an agent wrote to AgentTextLimits, keeping a line per kind of cut for one note.
class Clipper {
public:
    /// `text` as it is written under `limit`: whole, or cut and marked.
    static std::string cut(std::string_view text, std::size_t limit) {
        if (text.size() <= limit) return std::string{text};
        constexpr std::string_view marker = "\u2026[cut]";
        // Whole characters only, so the cut text is valid UTF-8.
        std::string kept;
        agent_output::append_utf8(kept, text, limit - marker.size());
        return kept += marker;
    }

    /// Cuts `field` to `limit`; fields cut under the same `what` share one line of the note.
    void text(std::string& field, std::size_t limit, std::string_view what) {
        if (field.size() <= limit) return;
        auto same =
            std::find_if(cuts_.begin(), cuts_.end(), [&](const Cut& c) { return c.what == what; });
        if (same == cuts_.end()) same = cuts_.insert(cuts_.end(), Cut{std::string{what}, limit});
        ++same->count;
        same->longest = std::max(same->longest, field.size());
        field = cut(field, limit);
    }

    void question(QuestionAsked& q, const std::string& id) {
        const std::string name = "question " + id;
        text(q.question, AgentTextLimits::question, name + " text");
        text(q.context, AgentTextLimits::question, name + " context");
        if (q.default_response)
            text(*q.default_response, AgentTextLimits::option, name + " default response");
        if (q.options.size() > AgentTextLimits::options) {
            dropped_.push_back(fmt::format("{}: {} options, the first {} kept",
                                           name,
                                           q.options.size(),
                                           AgentTextLimits::options));
            q.options.resize(AgentTextLimits::options);
        }
        for (auto& option : q.options) {
            text(option.id, AgentTextLimits::option, name + " option ids");
            text(option.label, AgentTextLimits::option, name + " option labels");
            text(option.value, AgentTextLimits::option, name + " option values");
            text(option.description, AgentTextLimits::option, name + " option descriptions");
        }
    }

    /// One note naming every cut, or nothing when none was needed.
    std::optional<std::string> note(const std::string& run_name) const {
        if (cuts_.empty() && dropped_.empty()) return std::nullopt;
        std::vector<std::string> lines;
        for (const Cut& c : cuts_) {
            lines.push_back(c.count == 1
                                ? fmt::format("{}: {} bytes, cut to {}", c.what, c.longest, c.limit)
                                : fmt::format("{}: {} cut to {} bytes (the longest {})",
                                              c.what,
                                              c.count,
                                              c.limit,
                                              c.longest));
        }
        lines.insert(lines.end(), dropped_.begin(), dropped_.end());
        return run_name +
               ": cut to the board's limits on what an agent writes:" + bullet_list(lines);
    }

private:
    struct Cut {
        std::string what;
        std::size_t limit = 0;
        std::size_t count = 0;
        std::size_t longest = 0;
    };

    std::vector<Cut> cuts_;
    std::vector<std::string> dropped_;
};

/// What was wrong with the run's artifact (as notes), and the artifact itself when it is new
/// or changed since the ticket recorded it.
void add_artifact(std::vector<Authored>& batch,
                  const Ticket& ticket,
                  const RunRecord& record,
                  const std::string& run_name,
                  Clipper& clip) {
    const Actor agent{ActorKind::agent, std::string{to_string(record.phase)}};
    auto note = [&](std::string text) {
        batch.push_back({board_actor(), NoteAdded{std::move(text)}});
    };
    if (!record.artifact_error.empty()) note(run_name + ": " + record.artifact_error);
    if (record.artifact) {
        const auto kind = artifact_of(record.phase);
        const auto& fm = record.artifact->front_matter;
        if (!fm.warnings.empty()) note(record.artifact_path + ":" + bullet_list(fm.warnings));
        const auto status = fm.status.value_or(ArtifactStatus::in_progress);
        const auto& recorded = kind ? ticket.artifact(*kind) : std::nullopt;
        const bool changed =
            !recorded || recorded->sha256 != record.artifact->sha256 ||
            (recorded->status != status && recorded->status != ArtifactStatus::rejected) ||
            recorded->summary != Clipper::cut(fm.summary, AgentTextLimits::summary);
        if (kind && changed) {
            ArtifactRecorded a;
            a.kind = *kind;
            a.path = record.artifact_path;
            a.status = status;
            a.summary = fm.summary;
            clip.text(a.summary, AgentTextLimits::summary, record.artifact_path + " summary");
            a.sha256 = record.artifact->sha256;
            batch.push_back({agent, std::move(a)});
        }
    }
}

}  // namespace

std::vector<Authored> outcome_batch(const Ticket& ticket, const RunRecord& record) {
    std::vector<Authored> batch;
    const Actor agent{ActorKind::agent, std::string{to_string(record.phase)}};
    const std::string run_name = std::string{to_string(record.phase)} + " run " + record.run_id;
    auto note = [&](std::string text) {
        batch.push_back({board_actor(), NoteAdded{std::move(text)}});
    };

    Clipper clip;
    if (!record.recovered.empty()) note(run_name + ": " + record.recovered);
    for (std::size_t i = 0; i < record.agent_notes.size(); ++i) {
        std::string text = record.agent_notes[i];
        clip.text(text, AgentTextLimits::note, fmt::format("note {}", i + 1));
        batch.push_back({agent, NoteAdded{std::move(text)}});
    }
    const AgentReport& report = record.output.report;
    if (!report.warnings.empty()) note(run_name + ":" + bullet_list(report.warnings));
    if (record.output_dropped > 0)
        note(
            fmt::format("{}: the agent printed {} bytes; its log keeps the first {} "
                        "(agents.{}.max_output) and the other {} bytes were dropped",
                        run_name,
                        record.output.bytes,
                        format_size(record.output_cap),
                        to_string(record.phase),
                        record.output_dropped));

    const bool succeeded = !record.timed_out && record.exit_code == 0 && record.error.empty() &&
                           !report.failed_in_output;
    const SignalScan signals = scan_signals(report.message);
    if (signals.distinct.size() > 1 || !signals.warnings.empty()) {
        std::string text = run_name + ": ";
        if (signals.distinct.size() > 1) {
            text += "the output held several signals (";
            for (std::size_t i = 0; i < signals.distinct.size(); ++i) {
                text += (i ? ", " : "") + std::string{to_string(signals.distinct[i])};
            }
            text += "); " + std::string{to_string(*signals.signal)} + " counts";
        } else {
            text += "ignored in the output";
        }
        text += bullet_list(signals.warnings);
        note(std::move(text));
    }

    add_artifact(batch, ticket, record, run_name, clip);

    if (succeeded) {
        QuestionScan questions = scan_questions(report.message);
        if (!questions.warnings.empty()) {
            note(run_name + ": questions dropped:" + bullet_list(questions.warnings));
        }
        const auto limit = static_cast<std::size_t>(std::max(record.max_questions, 0));
        if (limit > 0 && questions.questions.size() > limit) {
            // A person answers what is asked; twenty questions from one run is a run that
            // should have read more. The first ones are kept, the rest named so none is lost.
            std::vector<std::string> dropped;
            for (std::size_t i = limit; i < questions.questions.size(); ++i)
                dropped.push_back(Clipper::cut(questions.questions[i].question, 200));
            note(run_name + ": asked " + std::to_string(questions.questions.size()) +
                 " questions; agents." + std::string{to_string(record.phase)} +
                 ".max_questions is " + std::to_string(limit) +
                 ", so these were not asked:" + bullet_list(dropped));
            questions.questions.resize(limit);
        }
        for (std::size_t i = 0; i < questions.questions.size(); ++i) {
            QuestionAsked q = std::move(questions.questions[i]);
            q.question_id = next_question_id(ticket, i);
            clip.question(q, q.question_id);
            batch.push_back({agent, std::move(q)});
        }
    }

    RunFinished finished;
    finished.run = record.run_id;
    finished.exit_code = record.exit_code;
    finished.timed_out = record.timed_out;
    if (!record.error.empty()) {
        finished.error = record.error;
        finished.permanent = record.error_is_permanent;
    } else if (!record.timed_out && (record.exit_code != 0 || report.failed_in_output)) {
        // The agent's own words for what went wrong, and whether a retry can help.
        finished.error = report.error;
        if (finished.error.empty() && report.failed_in_output)
            finished.error = "the agent reported an error";
        finished.permanent = report.retry == Retry::futile;
    }
    finished.duration_ms = record.duration_ms;
    finished.cost_usd = std::max(0.0, report.cost_usd.value_or(0.0));
    finished.input_tokens = report.tokens.input;
    finished.output_tokens = report.tokens.output;
    finished.cache_read_tokens = report.tokens.cache_read;
    finished.cache_write_tokens = report.tokens.cache_write;
    finished.session = report.session;
    finished.signal = signals.signal;
    finished.context = signals.context;
    clip.text(finished.error, AgentTextLimits::error, "the run's error");
    clip.text(finished.context, AgentTextLimits::context, "the run's context");
    clip.text(finished.session, AgentTextLimits::session, "the run's session id");
    if (auto cuts = clip.note(run_name)) note(std::move(*cuts));
    batch.push_back({board_actor(), std::move(finished)});
    return batch;
}

app::Author finishing(std::shared_ptr<const RunRecord> record, bool whole) {
    return [record, whole](const Ticket& t) {
        auto batch = outcome_batch(t, *record);
        if (whole) return batch;
        std::vector<Authored> last{std::move(batch.back())};
        return last;
    };
}

std::vector<Authored> stopped_batch(const std::string& run_id,
                                    const std::vector<std::string>& put_back) {
    std::vector<Authored> batch;
    for (const auto& line : put_back) batch.push_back({board_actor(), NoteAdded{line}});
    batch.push_back({board_actor(), RunInterrupted{run_id, "board-daemon stopped"}});
    return batch;
}

std::vector<Authored> interrupted_batch(const Ticket& ticket,
                                        const RunRecord& record,
                                        std::string reason) {
    std::vector<Authored> batch;
    const std::string run_name = std::string{to_string(record.phase)} + " run " + record.run_id;
    Clipper clip;
    add_artifact(batch, ticket, record, run_name, clip);
    if (auto cuts = clip.note(run_name))
        batch.push_back({board_actor(), NoteAdded{std::move(*cuts)}});
    batch.push_back({board_actor(), RunInterrupted{record.run_id, std::move(reason)}});
    return batch;
}

}  // namespace board::orchestrator
