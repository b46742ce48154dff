// board_gen: writes a board of N tickets with about 20 events each, for benchmarks and for
// trying the CLI on a big board.
//
//   board_gen DIR N [--prefix PROJ] [--events 20]
//
// Every event goes through reduce() before it is written, so the board replays and
// `board verify` holds. Tickets stop at different points of the workflow (backlog, research
// with a run in flight, awaiting approval of the plan, implementing, review, done), one in
// 25 is an epic whose next 24 tickets are its children, one in 10 is blocked by the ticket
// before it. Logs are written directly (no fsync): this is test data, not a user's board.

#include <board/board_config.hpp>
#include <board/codec.hpp>
#include <board/reduce.hpp>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace fs = std::filesystem;
using namespace board;

namespace {

constexpr UnixMillis base_time = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

/// The workflow a ticket walks through, one payload at a time; `by` per step.
struct Step {
    Actor by;
    Payload payload;
};

std::vector<Step> workflow(const std::string& id,
                           int index,
                           bool epic,
                           const std::string& parent,
                           const std::string& blocker) {
    const Actor human{ActorKind::human, "ana"};
    const Actor system{ActorKind::system, {}};
    auto agent = [](Status phase) {
        return Actor{ActorKind::agent, std::string{to_string(phase)}};
    };
    Policy policy;
    std::vector<Step> steps;
    Created created;
    created.ticket = id;
    created.title = (epic ? "Epic " : "Make the upload path retry on flaky network number ") +
                    std::to_string(index);
    created.description =
        "So that a user on a train does not lose the upload; see the "
        "research notes for the approach.";
    created.kind = epic ? TicketType::epic : (index % 3 == 0 ? TicketType::bug : TicketType::task);
    created.priority = index % 5;
    created.labels = index % 2 == 0 ? std::vector<std::string>{"backend"}
                                    : std::vector<std::string>{"frontend", "ux"};
    created.parent = parent;
    if (!blocker.empty()) created.blocked_by = {blocker};
    steps.push_back({human, created});
    steps.push_back({human, NoteAdded{"Keep the public API unchanged."}});
    if (epic) return steps;

    int run = 0;
    auto run_id = [&] { return id + "-r" + std::to_string(++run); };
    auto finished = [](std::string run_name,
                       std::int64_t duration_ms,
                       double cost_usd,
                       std::string session,
                       std::optional<Signal> signal,
                       std::string context) {
        RunFinished f;
        f.run = std::move(run_name);
        f.duration_ms = duration_ms;
        f.cost_usd = cost_usd;
        f.session = std::move(session);
        f.signal = signal;
        f.context = std::move(context);
        return f;
    };
    auto phase_run = [&](Status phase, ArtifactKind kind, const char* path, bool iterate) {
        const std::string first = run_id();
        steps.push_back({system, RunStarted{first, phase, 1, 1, policy.run_policy(phase), {}}});
        if (iterate) {
            ArtifactRecorded draft{kind, path, ArtifactStatus::in_progress, "draft", "", {}};
            steps.push_back({agent(phase), draft});
            RunFinished one = finished(first, 60'000, 0.12, "s1", std::nullopt, "");
            steps.push_back({system, one});
            const std::string second = run_id();
            steps.push_back(
                {system, RunStarted{second, phase, 1, 2, policy.run_policy(phase), {}}});
            ArtifactRecorded done{kind, path, ArtifactStatus::complete, "done", "", {}};
            steps.push_back({agent(phase), done});
            steps.push_back(
                {system, finished(second, 90'000, 0.2, "s2", Signal::complete, "phase complete")});
        } else {
            ArtifactRecorded done{kind, path, ArtifactStatus::complete, "done", "", {}};
            steps.push_back({agent(phase), done});
            steps.push_back(
                {system, finished(first, 90'000, 0.2, "s3", Signal::complete, "phase complete")});
        }
    };
    phase_run(Status::research, ArtifactKind::research, "research.md", true);
    steps.push_back({human, NoteAdded{"Looks right; go on."}});
    steps.push_back({human, Started{}});
    phase_run(Status::planning, ArtifactKind::plan, "plan.md", false);
    steps.push_back({human, VerdictGiven{Verdict::approved, "Plan approved."}});
    phase_run(
        Status::implementing, ArtifactKind::implementation_log, "implementation-log.md", false);
    phase_run(Status::review, ArtifactKind::review, "review.md", false);
    steps.push_back({human, VerdictGiven{Verdict::approved, "Merged."}});
    return steps;
}

int usage() {
    std::fputs(
        "usage: board_gen DIR N [--prefix PROJ] [--events 20]\n"
        "  writes DIR/board.yaml and N tickets of about 20 events each\n",
        stderr);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return usage();
    const fs::path dir = argv[1];
    int count = 0;
    const std::string_view count_text = argv[2];
    if (std::from_chars(count_text.data(), count_text.data() + count_text.size(), count).ec !=
            std::errc{} ||
        count <= 0)
        return usage();
    std::string prefix = "PROJ";
    int events_per_ticket = 20;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string_view flag = argv[i];
        if (flag == "--prefix") {
            prefix = argv[i + 1];
        } else if (flag == "--events") {
            events_per_ticket = std::atoi(argv[i + 1]);
        } else {
            return usage();
        }
    }
    if (!is_valid_prefix(prefix) || events_per_ticket < 1) return usage();

    std::error_code ec;
    fs::create_directories(dir / "tickets", ec);
    if (ec) {
        std::fprintf(
            stderr, "board_gen: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
        return 3;
    }
    std::ofstream{dir / "board.yaml"} << default_board_yaml(prefix);

    long total_events = 0;
    std::string epic;
    for (int i = 1; i <= count; ++i) {
        const std::string id = prefix + "-" + std::to_string(i);
        const bool is_epic = i % 25 == 1;
        if (is_epic) epic = id;
        const std::string parent = is_epic ? "" : (i % 50 < 25 ? epic : "");
        const std::string blocker = i % 10 == 0 ? prefix + "-" + std::to_string(i - 1) : "";
        const auto steps = workflow(id, i, is_epic, parent, blocker);
        // Stop at different points so the board holds every column; about half reach the
        // full workflow (done), which is about `events_per_ticket` events with the notes.
        const std::size_t stop_at =
            i % 2 == 0 ? steps.size() : 1 + static_cast<std::size_t>(i) % steps.size();
        Ticket ticket;
        std::string lines;
        std::int64_t seq = 0;
        auto emit = [&](const Actor& by, const Payload& payload) {
            Event event{event_schema_version,
                        seq + 1,
                        id + "-e" + std::to_string(seq + 1),
                        base_time + i * 1000 + seq * 10,
                        by,
                        payload};
            Reduced next = reduce(ticket, event);
            if (!next) return false;
            ticket = std::move(next).value();
            ++seq;
            append_event(lines, event);
            lines += '\n';
            return true;
        };
        for (std::size_t s = 0; s < stop_at && s < steps.size(); ++s) {
            if (!emit(steps[s].by, steps[s].payload)) {
                std::fprintf(stderr, "board_gen: %s: step %zu refused\n", id.c_str(), s + 1);
                break;
            }
        }
        // Pad with notes up to the wanted size (a note is accepted in any status).
        while (seq < events_per_ticket && emit(Actor{ActorKind::human, "bo"},
                                               NoteAdded{"Progress note " + std::to_string(seq)})) {
        }
        fs::create_directories(dir / "tickets" / id);
        std::ofstream out{dir / "tickets" / id / "events.jsonl", std::ios::binary};
        out << lines;
        total_events += seq;
    }
    std::printf("%d tickets, %ld events in %s\n", count, total_events, dir.c_str());
    return 0;
}
