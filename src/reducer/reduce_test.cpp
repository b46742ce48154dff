// §2–§4 of the spec: creation, runs and their signals, budgets, human moves, legacy input.

#include "reducer/testing.hpp"

#include <board/next_action.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

using namespace board;
using namespace board::testing;

namespace {

Created sample_created() {
    Created c;
    c.ticket = "PROJ-1";
    c.title = "Add retry to the uploader";
    c.description = "Uploads fail on flaky networks";
    c.labels = {"backend"};
    return c;
}

bool has_note_containing(const Ticket& t, std::string_view text) {
    return std::any_of(t.notes.begin(), t.notes.end(), [&](const Note& n) {
        return n.text.find(text) != std::string::npos;
    });
}

}  // namespace

TEST_CASE("a log starts with created, and seqs must be contiguous", "[reducer]") {
    Log log;
    log.refused(NoteAdded{"hello"}, human(), RejectReason::not_created);
    const Ticket& t = log.must(sample_created());
    CHECK(t.id == "PROJ-1");
    CHECK(t.status == Status::backlog);
    CHECK(t.priority == 2);
    CHECK(t.seq == 1);
    log.refused(sample_created(), human(), RejectReason::already_created);

    Event skipped{1, 3, "x", t0, human(), NoteAdded{"skipped a seq"}};
    const Reduced r = reduce(t, skipped);
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == RejectReason::out_of_sequence);
}

TEST_CASE("an event by no one a log could name is refused, whatever it says", "[reducer]") {
    Log log;
    // `human:two words` is what a $USER with a space made: written, the log would not read.
    const Rejection r =
        log.refused(sample_created(), human("two words"), RejectReason::invalid_field);
    CHECK(r.message ==
          R"(by: "human:two words" is not an actor (a name is one word of printable characters))");
    log.must(sample_created());
    log.refused(NoteAdded{"hello"}, human(""), RejectReason::invalid_field);
    log.refused(
        NoteAdded{"hello"}, Actor{ActorKind::agent, "plan ning"}, RejectReason::invalid_field);
    log.must(NoteAdded{"hello"}, agent(Status::planning));
}

TEST_CASE("created refuses bad ids, titles, priorities and self-references", "[reducer]") {
    struct Bad {
        const char* what;
        Created event;
    };

    auto with = [](auto change) {
        Created c = sample_created();
        change(c);
        return c;
    };
    const Bad bad = GENERATE_COPY(values<Bad>({
        {"lowercase id", with([](Created& c) { c.ticket = "proj-1"; })},
        {"path in id", with([](Created& c) { c.ticket = "../etc-1"; })},
        {"long prefix", with([](Created& c) { c.ticket = "ABCDEFGHIJKLMNOPQ-1"; })},
        {"empty title", with([](Created& c) { c.title.clear(); })},
        {"priority 5", with([](Created& c) { c.priority = 5; })},
        {"priority -1", with([](Created& c) { c.priority = -1; })},
        {"self block", with([](Created& c) { c.blocked_by = {"PROJ-1"}; })},
        {"bad blocker", with([](Created& c) { c.blocked_by = {"nope"}; })},
        {"bad parent", with([](Created& c) { c.parent = "x"; })},
        {"empty label", with([](Created& c) { c.labels = {""}; })},
        {"requires input", with([](Created& c) { c.requires_ = Awaiting::input; })},
    }));
    CAPTURE(bad.what);
    Log log;
    log.refused(bad.event, human(), RejectReason::invalid_field);
}

TEST_CASE("legacy manual: true reads as awaiting work", "[reducer][legacy]") {
    Created c = sample_created();
    c.manual = true;
    Log log;
    const Ticket& t = log.must(c);
    CHECK(t.awaiting == Awaiting::work);

    // An explicit awaiting wins over the legacy flag.
    c.awaiting = Awaiting::approval;
    Log explicit_log;
    CHECK(explicit_log.must(c).awaiting == Awaiting::approval);
}

TEST_CASE("every signal does what §4 says in every agent phase", "[reducer][signal]") {
    struct SignalRow {
        Signal signal;
        std::optional<Awaiting> awaiting;
        bool to_review_from_implementing;
    };

    const SignalRow row = GENERATE(values<SignalRow>({
        {Signal::approval_needed, Awaiting::approval, true},
        {Signal::review_requested, Awaiting::review, true},
        {Signal::content_review, Awaiting::content, true},
        {Signal::input_needed, Awaiting::input, false},
        {Signal::blocked, Awaiting::input, false},
        {Signal::escalate, Awaiting::escalation, false},
        {Signal::checkpoint, Awaiting::checkpoint, false},
        {Signal::eject, Awaiting::work, false},
    }));
    const Status phase =
        GENERATE(Status::research, Status::planning, Status::implementing, Status::review);
    CAPTURE(to_string(row.signal), to_string(phase));
    Log log{ticket_in(phase)};
    const Ticket& t = log.run(phase, signalled(row.signal, "why: it needs a human"));
    const bool moves = row.to_review_from_implementing && phase == Status::implementing;
    CHECK(t.status == (moves ? Status::review : phase));
    CHECK(t.awaiting == row.awaiting);
    CHECK(t.handoff == Handoff::signal);
    CHECK_FALSE(t.run);
    // The context becomes an agent note (multi-line and colons kept).
    CHECK(t.notes.back().from == ActorKind::agent);
    CHECK(t.notes.back().text == "why: it needs a human");
}

TEST_CASE("COMPLETE completes the phase only with a complete artifact", "[reducer][signal]") {
    struct CompleteRow {
        Status phase;
        Status then_status;
        std::optional<Awaiting> then_awaiting;
    };

    // Default run policy: no gate, review-prep agent enabled.
    const CompleteRow row = GENERATE(values<CompleteRow>({
        {Status::research, Status::ready, std::nullopt},
        {Status::planning, Status::implementing, std::nullopt},
        {Status::implementing, Status::review, std::nullopt},
        {Status::review, Status::review, Awaiting::review},
    }));
    CAPTURE(to_string(row.phase));

    SECTION("with the artifact recorded complete") {
        Log log{ticket_in(row.phase)};
        const Ticket& t =
            log.run(row.phase, signalled(Signal::complete), {}, complete_artifact(row.phase));
        CHECK(t.status == row.then_status);
        CHECK(t.awaiting == row.then_awaiting);
    }
    SECTION("without it, a failed attempt with a note saying why") {
        Log log{ticket_in(row.phase)};
        const Ticket& t = log.run(row.phase, signalled(Signal::complete));
        CHECK(t.status == row.phase);
        CHECK_FALSE(t.awaiting);
        CHECK(t.phase_attempts == 1);
        CHECK(has_note_containing(t, "is not recorded complete"));
    }
}

TEST_CASE("implementing COMPLETE without a review agent waits for requires or review",
          "[reducer][signal]") {
    const std::optional<Awaiting> required = GENERATE(std::optional<Awaiting>{},
                                                      std::optional{Awaiting::approval},
                                                      std::optional{Awaiting::content});
    Ticket start = ticket_in(Status::implementing);
    start.requires_ = required;
    Log log{start};
    RunPolicy policy;
    policy.review_agent = false;
    const Ticket& t = log.run(Status::implementing,
                              signalled(Signal::complete),
                              policy,
                              complete_artifact(Status::implementing));
    CHECK(t.status == Status::review);
    CHECK(t.awaiting == required.value_or(Awaiting::review));
    CHECK(t.handoff == Handoff::gate);
}

TEST_CASE("runs without a signal iterate until max_iterations, then escalate",
          "[reducer][budget]") {
    const int limit = GENERATE(1, 3, 10);
    RunPolicy policy;
    policy.max_iterations = limit;
    Log log{ticket_in(Status::research)};
    for (int i = 1; i < limit; ++i) {
        const Ticket& t = log.run(Status::research, signalled(std::nullopt), policy);
        CHECK(t.phase_iterations == i);
        CHECK_FALSE(t.awaiting);
    }
    const Ticket& t = log.run(Status::research, signalled(std::nullopt), policy);
    CHECK(t.awaiting == Awaiting::escalation);
    CHECK(has_note_containing(t, "no signal after"));
    // Approving the escalation hands the ticket back with fresh counters.
    const Ticket& resumed = log.must(VerdictGiven{Verdict::approved, "Look at the uploader tests"});
    CHECK_FALSE(resumed.awaiting);
    CHECK(resumed.phase_iterations == 0);
}

TEST_CASE("failed runs are retried until max_attempts, then escalate with the error",
          "[reducer][budget]") {
    struct FailureRow {
        const char* what;
        RunFinished outcome;
        const char* note;
    };

    RunFinished timed_out;
    timed_out.timed_out = true;
    timed_out.exit_code = 9;
    RunFinished could_not_start;
    could_not_start.error = "could not start: claude: not found";
    could_not_start.exit_code = 127;
    const FailureRow row = GENERATE_COPY(values<FailureRow>({
        {"exit 2", failed(2), "exited with status 2"},
        {"timeout", timed_out, "timed out"},
        {"spawn", could_not_start, "claude: not found"},
    }));
    CAPTURE(row.what);
    RunPolicy policy;
    policy.max_attempts = 3;
    Log log{ticket_in(Status::implementing)};
    log.run(Status::implementing, row.outcome, policy);
    log.run(Status::implementing, row.outcome, policy);
    CHECK(log.ticket().phase_attempts == 2);
    CHECK(log.ticket().last_failure_at.has_value());
    CHECK_FALSE(log.ticket().awaiting);
    const Ticket& t = log.run(Status::implementing, row.outcome, policy);
    CHECK(t.awaiting == Awaiting::escalation);
    CHECK(t.handoff == Handoff::system);
    CHECK(has_note_containing(t, row.note));
}

TEST_CASE("a permanent failure escalates at once with the agent's own error", "[reducer][budget]") {
    RunPolicy policy;
    policy.max_attempts = 3;
    Log log{ticket_in(Status::research)};
    RunFinished refused = failed(1);
    refused.error = "API Error: 401 invalid x-api-key";
    refused.permanent = true;
    const Ticket& t = log.run(Status::research, refused, policy);
    CHECK(t.awaiting == Awaiting::escalation);
    CHECK(t.handoff == Handoff::system);
    CHECK(t.phase_attempts == 1);
    CHECK(has_note_containing(t, "exited with status 1: API Error: 401 invalid x-api-key"));
    CHECK(has_note_containing(t, "retrying cannot fix"));
}

TEST_CASE("a transient failure's note carries the agent's error and is retried",
          "[reducer][budget]") {
    Log log{ticket_in(Status::research)};
    RunFinished refused = failed(1);
    refused.error = "API Error: Unable to connect to API (ConnectionRefused)";
    const Ticket& t = log.run(Status::research, refused);
    CHECK_FALSE(t.awaiting);
    CHECK(has_note_containing(t, "status 1: API Error: Unable to connect to API"));
}

TEST_CASE("COMPLETE with no artifact file says that no file was written", "[reducer][signal]") {
    Log log{ticket_in(Status::research)};
    const Ticket& t = log.run(Status::research, signalled(Signal::complete));
    CHECK(has_note_containing(t, "the agent wrote no research file"));
}

TEST_CASE("a spent budget escalates, and cost and runs accumulate", "[reducer][budget]") {
    RunPolicy policy;
    policy.max_cost_usd = 1.0;
    Log log{ticket_in(Status::research)};
    RunFinished cheap = signalled(std::nullopt);
    cheap.cost_usd = 0.6;
    cheap.session = "sess-1";
    CHECK_FALSE(log.run(Status::research, cheap, policy).awaiting);
    const Ticket& t = log.run(Status::research, cheap, policy);
    CHECK(t.cost_usd == Approx(1.2));
    CHECK(t.runs_total == 2);
    CHECK(t.last_run_ended_at == t.updated_at);  // the feedback of the next prompt starts here
    CHECK(t.last_session == "sess-1");
    CHECK(t.awaiting == Awaiting::escalation);
    CHECK(has_note_containing(t, "budget exhausted"));
}

TEST_CASE("runs start only where an agent may work", "[reducer][run]") {
    struct RunRow {
        Status column;
        Status phase;
        bool accepted;
    };

    const RunRow row = GENERATE(values<RunRow>({
        {Status::backlog, Status::research, true},
        {Status::ready, Status::planning, true},
        {Status::research, Status::research, true},
        {Status::review, Status::review, true},
        {Status::backlog, Status::planning, false},
        {Status::research, Status::planning, false},
        {Status::done, Status::research, false},
        {Status::ready, Status::ready, false},
    }));
    CAPTURE(to_string(row.column), to_string(row.phase));
    Log log{ticket_in(row.column)};
    if (row.accepted) {
        const Ticket& t = log.must(RunStarted{"r1", row.phase, 1, 1, {}, {}}, system_actor());
        CHECK(t.status == row.phase);
        CHECK(t.run->id == "r1");
        log.refused(
            RunStarted{"r2", row.phase, 1, 1, {}, {}}, system_actor(), RejectReason::run_in_flight);
    } else {
        log.refused(
            RunStarted{"r1", row.phase, 1, 1, {}, {}}, system_actor(), RejectReason::wrong_status);
    }
}

TEST_CASE("no agent run starts while a human is awaited, or on an epic", "[reducer][run]") {
    Log waiting{ticket_in(Status::research, Awaiting::input)};
    waiting.refused(RunStarted{"r1", Status::research, 1, 1, {}, {}},
                    system_actor(),
                    RejectReason::awaiting_human);
    Ticket epic = ticket_in(Status::backlog);
    epic.type = TicketType::epic;
    Log epic_log{epic};
    epic_log.refused(RunStarted{"r1", Status::research, 1, 1, {}, {}},
                     system_actor(),
                     RejectReason::wrong_status);
}

TEST_CASE("a run that ends after a human moved the ticket keeps its words but not its outcome",
          "[reducer][run]") {
    Log log{ticket_in(Status::implementing)};
    log.must(RunStarted{"r1", Status::implementing, 1, 1, {}, {}}, system_actor());
    log.must(Moved{Status::planning, "The plan missed the migration"});
    RunFinished done = signalled(Signal::approval_needed, "please look");
    done.run = "r1";
    const Ticket& t = log.must(done, system_actor());
    CHECK(t.status == Status::planning);
    CHECK_FALSE(t.awaiting);
    CHECK_FALSE(t.run);
    CHECK(has_note_containing(t, "please look"));
    CHECK(has_note_containing(t, "its outcome is not applied"));
    // Finishing it twice is refused: a run is applied once.
    log.refused(done, system_actor(), RejectReason::unknown_run);
}

TEST_CASE("an interrupted run is not an attempt", "[reducer][run]") {
    Log log{ticket_in(Status::research)};
    log.must(RunStarted{"r1", Status::research, 1, 1, {}, {}}, system_actor());
    const Ticket& t = log.must(RunInterrupted{"r1", "daemon stopped"}, system_actor());
    CHECK_FALSE(t.run);
    CHECK(t.phase_attempts == 0);
    CHECK(has_note_containing(t, "interrupted: daemon stopped"));
}

TEST_CASE("a complete artifact recorded outside a run completes the phase", "[reducer][artifact]") {
    Log log{ticket_in(Status::research)};
    const Ticket& t = log.must(complete_artifact(Status::research), human());
    CHECK(t.status == Status::ready);
    const auto& artifact = t.artifact(ArtifactKind::research);
    REQUIRE(artifact);
    CHECK(artifact->sha256 == std::string(64, 'a'));
    CHECK(artifact->path == "research.md");

    ArtifactRecorded escaping = complete_artifact(Status::planning);
    escaping.path = "../../etc/passwd";
    log.refused(escaping, human(), RejectReason::invalid_field);
    ArtifactRecorded bad_hash = complete_artifact(Status::planning);
    bad_hash.sha256 = "not-a-digest";
    log.refused(bad_hash, human(), RejectReason::invalid_field);
}

TEST_CASE("notes keep their author and order", "[reducer][note]") {
    Log log{ticket_in(Status::research)};
    log.must(NoteAdded{"first"}, human("ana"));
    log.must(NoteAdded{"second"}, agent(Status::research));
    const Ticket& t = log.must(NoteAdded{"third"}, system_actor());
    REQUIRE(t.notes.size() == 3);
    CHECK(t.notes[0].author == "ana");
    CHECK(t.notes[1].from == ActorKind::agent);
    CHECK(t.notes[2].from == ActorKind::system);
    log.refused(NoteAdded{""}, human(), RejectReason::invalid_field);
}

TEST_CASE("human moves: start, move, cancel, reopen, update", "[reducer][human]") {
    struct MoveRow {
        const char* what;
        Status from;
        Payload event;
        std::optional<Status> then;  // nullopt: refused
        RejectReason reason;
    };

    const MoveRow row = GENERATE(values<MoveRow>({
        {"start backlog", Status::backlog, Started{}, Status::research, {}},
        {"start ready", Status::ready, Started{}, Status::planning, {}},
        {"start research", Status::research, Started{}, std::nullopt, RejectReason::wrong_status},
        {"start done", Status::done, Started{}, std::nullopt, RejectReason::wrong_status},
        {"move back",
         Status::implementing,
         Moved{Status::planning, "wrong plan"},
         Status::planning,
         {}},
        {"move to backlog", Status::review, Moved{Status::backlog, "later"}, Status::backlog, {}},
        {"move forward",
         Status::research,
         Moved{Status::review, "skip"},
         std::nullopt,
         RejectReason::wrong_status},
        {"move same",
         Status::research,
         Moved{Status::research, "again"},
         std::nullopt,
         RejectReason::wrong_status},
        {"move no reason",
         Status::review,
         Moved{Status::planning, ""},
         std::nullopt,
         RejectReason::invalid_field},
        {"move done",
         Status::done,
         Moved{Status::backlog, "again"},
         std::nullopt,
         RejectReason::wrong_status},
        {"cancel", Status::planning, Cancelled{"obsolete"}, Status::done, {}},
        {"cancel done", Status::done, Cancelled{"again"}, std::nullopt, RejectReason::wrong_status},
        {"reopen", Status::done, Reopened{"regressed"}, Status::backlog, {}},
        {"reopen open", Status::review, Reopened{"?"}, std::nullopt, RejectReason::wrong_status},
        {"assign",
         Status::ready,
         Updated{.awaiting = std::optional{Awaiting::work}},
         Status::ready,
         {}},
        {"assign done",
         Status::done,
         Updated{.awaiting = std::optional{Awaiting::work}},
         std::nullopt,
         RejectReason::wrong_status},
        {"empty update", Status::ready, Updated{}, std::nullopt, RejectReason::nothing_to_do},
        {"bad priority",
         Status::ready,
         Updated{.priority = 9},
         std::nullopt,
         RejectReason::invalid_field},
        {"self parent",
         Status::ready,
         Updated{.parent = std::string{"PROJ-1"}},
         std::nullopt,
         RejectReason::invalid_field},
    }));
    CAPTURE(row.what);
    Log log{ticket_in(row.from)};
    if (row.then) {
        const Ticket& t = log.must(row.event);
        CHECK(t.status == *row.then);
    } else {
        log.refused(row.event, human(), row.reason);
    }
}

TEST_CASE("cancel and reopen set and clear the resolution", "[reducer][human]") {
    Log log{ticket_in(Status::implementing, Awaiting::input)};
    const Ticket& cancelled = log.must(Cancelled{"superseded by PROJ-9"});
    CHECK(cancelled.resolution == Resolution::wont_do);
    CHECK_FALSE(cancelled.awaiting);
    const Ticket& reopened = log.must(Reopened{"needed after all"});
    CHECK(reopened.status == Status::backlog);
    CHECK_FALSE(reopened.resolution);
}

TEST_CASE("update --awaiting assigns to a human and none releases to the agent",
          "[reducer][human]") {
    Log log{ticket_in(Status::implementing)};
    CHECK(log.must(Updated{.awaiting = std::optional{Awaiting::work}}).awaiting == Awaiting::work);
    log.refused(Updated{.awaiting = std::optional<Awaiting>{}},
                agent(Status::implementing),
                RejectReason::not_human);
    CHECK_FALSE(log.must(Updated{.awaiting = std::optional<Awaiting>{}}).awaiting);
    const Ticket& t = log.must(Updated{.title = "Retry uploads with backoff",
                                       .priority = 0,
                                       .labels = std::vector<std::string>{"backend", "net"},
                                       .blocked_by = std::vector<std::string>{"PROJ-2"}});
    CHECK(t.title == "Retry uploads with backoff");
    CHECK(t.priority == 0);
    CHECK(t.labels.size() == 2);
    CHECK(t.blocked_by == std::vector<std::string>{"PROJ-2"});
}

TEST_CASE("fork renames the ticket and drops the run in flight", "[reducer][fork]") {
    Log log{ticket_in(Status::planning)};
    log.must(RunStarted{"r1", Status::planning, 1, 1, {}, {}}, system_actor());
    const std::int64_t at = log.ticket().seq;
    const Ticket& t = log.must(Forked{"PROJ-1", at, "PROJ-7"}, human());
    CHECK(t.id == "PROJ-7");
    CHECK_FALSE(t.run);
    log.refused(Forked{"PROJ-7", 1, "PROJ-8"}, human(), RejectReason::invalid_field);
}

TEST_CASE("rejections name the ticket and a machine-readable reason", "[reducer]") {
    for (int r = 0; r <= static_cast<int>(RejectReason::nothing_to_do); ++r) {
        CHECK(to_string(static_cast<RejectReason>(r)) != "?");
    }
    Log log{ticket_in(Status::implementing)};
    const auto why =
        log.refused(VerdictGiven{Verdict::approved, ""}, human(), RejectReason::not_awaiting);
    CHECK(why.message == "PROJ-1 is not awaiting a human (status implementing)");
}

TEST_CASE("a run is stale once the ticket left its phase, even if it came back", "[reducer][run]") {
    struct StaleRow {
        const char* what;
        std::vector<Payload> meanwhile;
    };

    const StaleRow row = GENERATE_COPY(values<StaleRow>({
        {"move and start", {Moved{Status::backlog, "rethink"}, Started{}}},
        {"cancel, reopen, start", {Cancelled{"dup"}, Reopened{"not a dup"}, Started{}}},
    }));
    CAPTURE(row.what);
    Log log{ticket_in(Status::backlog)};
    log.must(RunStarted{"r1", Status::research, 1, 1, {}, {}}, system_actor());
    for (const auto& p : row.meanwhile) log.must(p);
    REQUIRE(log.ticket().status == Status::research);
    RunFinished late = signalled(Signal::escalate, "too late");
    late.run = "r1";
    const Ticket& t = log.must(late, system_actor());
    CHECK_FALSE(t.awaiting);
    CHECK_FALSE(t.run);
    CHECK(has_note_containing(t, "its outcome is not applied"));
}

TEST_CASE("a spent budget never leaves a ticket stuck where nobody sees it", "[reducer][budget]") {
    RunPolicy policy;
    policy.max_cost_usd = 1.0;
    policy.gate = Gate::approval;
    Log log{ticket_in(Status::planning)};
    RunFinished costly = signalled(Signal::complete);
    costly.cost_usd = 2.0;
    const Ticket& gated =
        log.run(Status::planning, costly, policy, complete_artifact(Status::planning));
    CHECK(gated.awaiting == Awaiting::approval);  // the gate is the human's turn already
    CHECK(has_note_containing(gated, "budget exhausted: $2.00 spent of $1.00"));
    const Ticket& t = log.must(VerdictGiven{Verdict::approved, ""});
    CHECK(t.status == Status::implementing);
    // The human passed the gate: the agent may run; its next finish escalates again.
    CHECK(std::holds_alternative<StartRun>(next_action(t, Policy{})));
    const Ticket& after = log.run(Status::implementing, signalled(std::nullopt), policy);
    CHECK(after.awaiting == Awaiting::escalation);
}

TEST_CASE("a negative cost is refused", "[reducer][budget]") {
    Log log{ticket_in(Status::research)};
    log.must(RunStarted{"r1", Status::research, 1, 1, {}, {}}, system_actor());
    RunFinished refund = signalled(std::nullopt);
    refund.run = "r1";
    refund.cost_usd = -5.0;
    log.refused(refund, system_actor(), RejectReason::invalid_field);
}

TEST_CASE("moving back rejects the artifact of the phase that is redone", "[reducer][human]") {
    Log log{ticket_in(Status::research)};
    log.must(complete_artifact(Status::research), human());  // research complete → ready
    log.must(Started{});                                     // → planning
    const Ticket& t = log.must(Moved{Status::research, "the research missed the proxy"});
    CHECK(t.artifact(ArtifactKind::research)->status == ArtifactStatus::rejected);
    // So a bare COMPLETE cannot pass research again without a new artifact.
    CHECK(log.run(Status::research, signalled(Signal::complete)).status == Status::research);
}
