#pragma once
// A realistic ticket history for benchmarks: a ticket that cycles through research runs with
// notes between them, checkpoints a human approves, questions asked and answered, and a cost
// on every run. Every event is accepted by reduce() (checked by the benchmarks at start-up).

#include <board/event.hpp>

#include <string>
#include <vector>

namespace board::bench {

inline std::vector<Event> realistic_log(std::size_t count) {
    std::vector<Event> log;
    log.reserve(count);
    const Actor ana{ActorKind::human, "ana"}, daemon{ActorKind::system, ""};
    const Actor researcher{ActorKind::agent, "research"};
    UnixMillis at = 1'795'000'000'000;
    auto push = [&](Actor by, Payload p) {
        const auto seq = static_cast<std::int64_t>(log.size()) + 1;
        log.push_back(Event{1, seq, "01HZX" + std::to_string(seq), at += 1500, by, std::move(p)});
    };
    Created created;
    created.ticket = "PROJ-42";
    created.title = "Retry uploads on flaky networks";
    created.description = "Uploads fail on flaky networks; add bounded retries with backoff.";
    created.labels = {"backend", "reliability"};
    push(ana, created);
    RunPolicy policy;
    policy.max_iterations = 1'000'000;
    policy.max_cost_usd = 0;  // unlimited: the history is long on purpose
    for (int cycle = 0; log.size() < count; ++cycle) {
        const std::string run = "r" + std::to_string(cycle);
        push(daemon, RunStarted{run, Status::research, 1, cycle + 1, policy, {}});
        RunFinished finished;
        finished.run = run;
        finished.duration_ms = 83'000;
        finished.cost_usd = 0.0125;
        finished.session = "sess-" + std::to_string(cycle);
        if (cycle % 4 == 3) {
            finished.signal = Signal::checkpoint;
            finished.context =
                "Explored the upload client; the retry helper lives in net/retry.cpp.";
        }
        push(daemon, finished);
        if (cycle % 4 == 3) {
            push(ana, VerdictGiven{Verdict::approved, "Good, continue with the client tests"});
        } else if (cycle % 4 == 1) {
            QuestionAsked q;
            q.question_id = "q" + std::to_string(cycle);
            q.question = "Should retries apply to PUT as well as POST?";
            q.kind = QuestionKind::non_blocking;
            q.response_type = ResponseType::boolean;
            q.default_response = "true";
            push(researcher, q);
            push(ana, QuestionAnswered{q.question_id, "true", "PUT is idempotent here"});
        }
        push(researcher,
             NoteAdded{"Read the upload path; failures cluster on 502s from the proxy."});
        push(ana, NoteAdded{"Keep the total retry time under a minute."});
    }
    log.resize(count);
    return log;
}

}  // namespace board::bench
