#include "orchestrator/run_outcome.hpp"

#include <board/agent_output.hpp>

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

}  // namespace

std::vector<Authored> outcome_batch(const Ticket& ticket, const RunRecord& record) {
    std::vector<Authored> batch;
    const Actor agent{ActorKind::agent, std::string{to_string(record.phase)}};
    const std::string run_name = std::string{to_string(record.phase)} + " run " + record.run_id;
    auto note = [&](std::string text) {
        batch.push_back({board_actor(), NoteAdded{std::move(text)}});
    };

    if (!record.recovered.empty()) note(run_name + ": " + record.recovered);
    for (const auto& text : record.agent_notes) batch.push_back({agent, NoteAdded{text}});
    const AgentReport& report = record.output.report;
    if (!report.warnings.empty()) note(run_name + ":" + bullet_list(report.warnings));

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
            recorded->summary != fm.summary;
        if (kind && changed) {
            ArtifactRecorded a;
            a.kind = *kind;
            a.path = record.artifact_path;
            a.status = status;
            a.summary = fm.summary;
            a.sha256 = record.artifact->sha256;
            batch.push_back({agent, std::move(a)});
        }
    }

    if (succeeded) {
        QuestionScan questions = scan_questions(report.message);
        if (!questions.warnings.empty()) {
            note(run_name + ": questions dropped:" + bullet_list(questions.warnings));
        }
        for (std::size_t i = 0; i < questions.questions.size(); ++i) {
            QuestionAsked q = std::move(questions.questions[i]);
            q.question_id = next_question_id(ticket, i);
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

}  // namespace board::orchestrator
