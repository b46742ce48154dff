// §5 of the spec: every row of the verdict table, in every agent phase, plus gates,
// the `requires` cycle and provenance.

#include "reducer/testing.hpp"

#include <board/reduce.hpp>

#include <catch2/catch.hpp>

using namespace board;
using namespace board::testing;

namespace {

// What the spec's table says happens, in the test's own words.
enum class Expect { next_column, human_did_it, stays, stays_reset, redo, wont_do };

struct Row {
    Awaiting awaiting;
    Verdict verdict;
    Expect expect;
};

// clang-format off
const Row verdict_table[] = {
    {Awaiting::work,       Verdict::approved, Expect::human_did_it},
    {Awaiting::work,       Verdict::rejected, Expect::stays},
    {Awaiting::approval,   Verdict::approved, Expect::next_column},
    {Awaiting::approval,   Verdict::rejected, Expect::redo},
    {Awaiting::review,     Verdict::approved, Expect::next_column},
    {Awaiting::review,     Verdict::rejected, Expect::redo},
    {Awaiting::content,    Verdict::approved, Expect::next_column},
    {Awaiting::content,    Verdict::rejected, Expect::redo},
    {Awaiting::input,      Verdict::approved, Expect::stays},
    {Awaiting::input,      Verdict::rejected, Expect::wont_do},
    {Awaiting::escalation, Verdict::approved, Expect::stays_reset},
    {Awaiting::escalation, Verdict::rejected, Expect::wont_do},
    {Awaiting::checkpoint, Verdict::approved, Expect::stays},
    {Awaiting::checkpoint, Verdict::rejected, Expect::redo},
};

// clang-format on

Status column_after(Status phase) {
    switch (phase) {
        case Status::research:
            return Status::ready;
        case Status::planning:
            return Status::implementing;
        case Status::implementing:
            return Status::review;
        default:
            return Status::done;
    }
}

}  // namespace

TEST_CASE("every verdict of the §5 table does what the table says in every agent phase",
          "[reducer][verdict]") {
    const Row row = GENERATE(from_range(std::begin(verdict_table), std::end(verdict_table)));
    const Status phase =
        GENERATE(Status::research, Status::planning, Status::implementing, Status::review);
    CAPTURE(to_string(row.awaiting), to_string(row.verdict), to_string(phase));

    Ticket start = ticket_in(phase, row.awaiting);
    start.phase_attempts = 1;
    start.phase_iterations = 3;
    start.requires_ = Awaiting::content;
    Log log{start};
    const std::string feedback = "Use the existing retry helper";
    const Ticket& t = log.must(VerdictGiven{row.verdict, feedback});

    CHECK(t.notes.back().text == feedback);
    CHECK(t.notes.back().from == ActorKind::human);
    CHECK(t.requires_ == Awaiting::content);  // no verdict changes the declared gate

    switch (row.expect) {
        case Expect::next_column:
            if (phase == Status::review && row.awaiting != Awaiting::content) {
                // §2: what an agent asked for is not the declared gate; that comes next.
                CHECK(t.status == Status::review);
                CHECK(t.awaiting == Awaiting::content);
                CHECK(t.handoff == Handoff::gate);
            } else {
                CHECK(t.status == column_after(phase));
                CHECK_FALSE(t.awaiting);
            }
            break;
        case Expect::human_did_it: {
            const bool finishes = phase == Status::implementing || phase == Status::review;
            CHECK(t.status == (finishes ? Status::done : column_after(phase)));
            CHECK(t.resolution == (finishes ? std::optional{Resolution::completed} : std::nullopt));
            CHECK_FALSE(t.awaiting);
            break;
        }
        case Expect::stays:
            CHECK(t.status == phase);
            CHECK_FALSE(t.awaiting);
            CHECK(t.phase_attempts == 1);
            CHECK(t.phase_iterations == 3);
            break;
        case Expect::stays_reset:
            CHECK(t.status == phase);
            CHECK_FALSE(t.awaiting);
            CHECK(t.phase_attempts == 0);
            CHECK(t.phase_iterations == 0);
            break;
        case Expect::redo: {
            const Status back = phase == Status::review ? Status::implementing : phase;
            CHECK(t.status == back);
            CHECK_FALSE(t.awaiting);
            // Counters reset when the column changes; the redo itself counts as an attempt.
            CHECK(t.phase_attempts == (back == phase ? 2 : 1));
            break;
        }
        case Expect::wont_do:
            CHECK(t.status == Status::done);
            CHECK(t.resolution == Resolution::wont_do);
            CHECK_FALSE(t.awaiting);
            break;
    }
}

TEST_CASE("a ticket given to a human from the start is done when the human approves",
          "[reducer][verdict]") {
    const Status status = GENERATE(Status::backlog, Status::ready);
    Log log{ticket_in(status, Awaiting::work)};
    const Ticket& t = log.must(VerdictGiven{Verdict::approved, ""});
    CHECK(t.status == Status::done);
    CHECK(t.resolution == Resolution::completed);
}

TEST_CASE("verdicts are refused when nobody awaits a human, and reject needs feedback",
          "[reducer][verdict]") {
    const Status status =
        GENERATE(Status::backlog, Status::research, Status::implementing, Status::done);
    Log idle{ticket_in(status)};
    const auto why =
        idle.refused(VerdictGiven{Verdict::approved, ""}, human(), RejectReason::not_awaiting);
    CHECK_THAT(why.message, Catch::Contains("PROJ-1 is not awaiting a human"));

    Log waiting{ticket_in(Status::review, Awaiting::review)};
    waiting.refused(VerdictGiven{Verdict::rejected, ""}, human(), RejectReason::feedback_required);
}

TEST_CASE("gates none, checkpoint and approval decide where a completed phase goes",
          "[reducer][gate]") {
    struct GateRow {
        Status phase;
        Gate gate;
        Status then_status;
        std::optional<Awaiting> then_awaiting;
    };

    const GateRow row = GENERATE(values<GateRow>({
        {Status::research, Gate::none, Status::ready, std::nullopt},
        {Status::research, Gate::checkpoint, Status::research, Awaiting::checkpoint},
        {Status::research, Gate::approval, Status::research, Awaiting::approval},
        {Status::planning, Gate::none, Status::implementing, std::nullopt},
        {Status::planning, Gate::checkpoint, Status::planning, Awaiting::checkpoint},
        {Status::planning, Gate::approval, Status::planning, Awaiting::approval},
    }));
    CAPTURE(to_string(row.phase), to_string(row.gate));
    Log log{ticket_in(row.phase)};
    RunPolicy policy;
    policy.gate = row.gate;
    // Recording inside a run does not complete the phase; the run's COMPLETE does.
    log.must(RunStarted{"r1", row.phase, 1, 1, policy, {}}, system_actor());
    log.must(complete_artifact(row.phase), agent(row.phase));
    CHECK(log.ticket().status == row.phase);
    RunFinished done = signalled(Signal::complete);
    done.run = "r1";
    const Ticket& t = log.must(done, system_actor());
    CHECK(t.status == row.then_status);
    CHECK(t.awaiting == row.then_awaiting);

    if (row.then_awaiting) {
        CHECK(t.handoff == Handoff::gate);
        // Approving a gate passes it, even a checkpoint (§3).
        const Ticket& passed = log.must(VerdictGiven{Verdict::approved, ""});
        CHECK(passed.status == column_after(row.phase));
        CHECK_FALSE(passed.awaiting);
    }
}

TEST_CASE("a rejected gate sends the agent back with its artifact marked rejected",
          "[reducer][gate]") {
    Log log{ticket_in(Status::planning)};
    RunPolicy policy;
    policy.gate = Gate::approval;
    log.must(RunStarted{"r1", Status::planning, 1, 1, policy, {}}, system_actor());
    log.must(complete_artifact(Status::planning), agent(Status::planning));
    RunFinished done = signalled(Signal::complete);
    done.run = "r1";
    log.must(done, system_actor());
    const Ticket& t =
        log.must(VerdictGiven{Verdict::rejected, "Split the migration into two steps"});
    CHECK(t.status == Status::planning);
    CHECK_FALSE(t.awaiting);
    CHECK(t.artifact(ArtifactKind::plan)->status == ArtifactStatus::rejected);
    // The next COMPLETE without a rewritten plan is a failed attempt, not a completion.
    const Ticket& again = log.run(Status::planning, signalled(Signal::complete), policy);
    CHECK(again.status == Status::planning);
    CHECK_FALSE(again.awaiting);
    CHECK(again.phase_attempts == 2);
}

TEST_CASE("requires survives three reject cycles and is the final gate each time",
          "[reducer][gate][requires]") {
    const Awaiting required = GENERATE(Awaiting::approval, Awaiting::content);
    Ticket start = ticket_in(Status::implementing);
    start.requires_ = required;
    Log log{start};
    RunPolicy no_review_agent;
    no_review_agent.review_agent = false;
    for (int cycle = 1; cycle <= 3; ++cycle) {
        CAPTURE(cycle);
        log.must(
            RunStarted{
                "r" + std::to_string(cycle), Status::implementing, 1, 1, no_review_agent, {}},
            system_actor());
        log.must(complete_artifact(Status::implementing), agent(Status::implementing));
        RunFinished done = signalled(Signal::complete);
        done.run = "r" + std::to_string(cycle);
        const Ticket& at_review = log.must(done, system_actor());
        REQUIRE(at_review.status == Status::review);
        CHECK(at_review.awaiting == required);
        const Ticket& back =
            log.must(VerdictGiven{Verdict::rejected, "Not yet: cycle " + std::to_string(cycle)});
        CHECK(back.status == Status::implementing);
        CHECK(back.requires_ == required);
    }
    // An agent cannot lift the gate it is held to.
    log.refused(Updated{.requires_ = std::optional<Awaiting>{}},
                agent(Status::implementing),
                RejectReason::not_human);
}

TEST_CASE("only humans give verdicts, answers, cancels and gate changes", "[reducer][provenance]") {
    struct ProvenanceRow {
        const char* what;
        Ticket start;
        Payload event;
    };

    Ticket with_question = ticket_in(Status::research, Awaiting::input, Handoff::question);
    Question q;
    q.id = "q1";
    q.question = "Which endpoint?";
    with_question.questions.push_back(q);
    const ProvenanceRow row = GENERATE_COPY(values<ProvenanceRow>({
        {"approve",
         ticket_in(Status::review, Awaiting::review),
         VerdictGiven{Verdict::approved, ""}},
        {"reject",
         ticket_in(Status::review, Awaiting::review),
         VerdictGiven{Verdict::rejected, "no"}},
        {"answer", with_question, QuestionAnswered{"q1", "the v2 one", ""}},
        {"cancel", ticket_in(Status::implementing), Cancelled{"not needed"}},
        {"requires",
         ticket_in(Status::implementing),
         Updated{.requires_ = std::optional<Awaiting>{}}},
        {"release",
         ticket_in(Status::review, Awaiting::review),
         Updated{.awaiting = std::optional<Awaiting>{}}},
    }));
    const Actor by = GENERATE(Actor{ActorKind::agent, "review"}, Actor{ActorKind::system, ""});
    CAPTURE(row.what, to_string(by));
    // The daemon (system) may not release a human's gate either; only agents are refused that.
    if (std::string_view{row.what} == "release" && by.kind == ActorKind::system) return;
    Log log{row.start};
    log.refused(row.event, by, RejectReason::not_human);
}
