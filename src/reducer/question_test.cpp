// §6 of the spec: questions, their timeouts in virtual time, answers and their validation.

#include "reducer/testing.hpp"

#include <board/next_action.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

using namespace board;
using namespace board::testing;

namespace {

QuestionAsked ask(QuestionKind kind,
                  ResponseType response = ResponseType::text,
                  std::optional<std::string> default_response = std::nullopt,
                  std::optional<int> minutes = std::nullopt) {
    QuestionAsked q;
    q.question_id = "q1";
    q.question = "Which storage backend?";
    q.kind = kind;
    q.response_type = response;
    if (response == ResponseType::choice) {
        q.options = {{"a", "SQLite", "sqlite", ""},
                     {"b", "Postgres", "postgres", "needs a server"}};
    }
    q.default_response = std::move(default_response);
    q.timeout_minutes = minutes;
    return q;
}

constexpr UnixMillis minute = 60'000;

}  // namespace

TEST_CASE("timeouts default per kind and are clamped to [5 min, 24 h]", "[reducer][question]") {
    struct TimeoutRow {
        QuestionKind kind;
        std::optional<int> asked;
        std::optional<int> expected;
    };

    const TimeoutRow row = GENERATE(values<TimeoutRow>({
        {QuestionKind::blocking, std::nullopt, 30},
        {QuestionKind::approval, std::nullopt, 15},
        {QuestionKind::error_recovery, std::nullopt, 10},
        {QuestionKind::non_blocking, std::nullopt, std::nullopt},
        {QuestionKind::non_blocking, 60, 60},
        {QuestionKind::blocking, 1, 5},
        {QuestionKind::blocking, -3, 5},
        {QuestionKind::blocking, 100000, 24 * 60},
    }));
    const auto at = question_timeout_at(row.kind, row.asked, t0);
    if (row.expected) {
        REQUIRE(at);
        CHECK(*at == t0 + *row.expected * minute);
    } else {
        CHECK_FALSE(at);
    }
}

TEST_CASE("each question kind, with and without a default, answered, late or timed out",
          "[reducer][question]") {
    const QuestionKind kind = GENERATE(QuestionKind::blocking,
                                       QuestionKind::non_blocking,
                                       QuestionKind::approval,
                                       QuestionKind::error_recovery);
    const bool with_default = GENERATE(true, false);
    CAPTURE(to_string(kind), with_default);
    const bool blocks = kind != QuestionKind::non_blocking;
    const ResponseType response =
        kind == QuestionKind::approval ? ResponseType::approval : ResponseType::text;
    const std::optional<std::string> fallback =
        with_default
            ? std::optional<std::string>{kind == QuestionKind::approval ? "approve" : "sqlite"}
            : std::nullopt;

    Log log{ticket_in(Status::research)};
    const Ticket& asked = log.must(ask(kind, response, fallback, 30), agent());
    REQUIRE(asked.questions.size() == 1);
    CHECK(asked.questions[0].status == QuestionStatus::pending);
    if (blocks) {
        CHECK(asked.awaiting ==
              (kind == QuestionKind::approval ? Awaiting::approval : Awaiting::input));
        CHECK(asked.handoff == Handoff::question);
        // A verdict is not an answer: the human is pointed at `board answer`.
        log.refused(VerdictGiven{Verdict::approved, ""}, human(), RejectReason::answer_required);
    } else {
        CHECK_FALSE(asked.awaiting);
    }

    SECTION("answered in time: the answer is a human note and the agent resumes") {
        const std::string value = kind == QuestionKind::approval ? "approve" : "postgres";
        const Ticket& t = log.must(QuestionAnswered{"q1", value, "it is already deployed"});
        CHECK(t.questions[0].status == QuestionStatus::answered);
        CHECK(t.questions[0].answer == value);
        CHECK(t.questions[0].answered_by == human());
        CHECK_FALSE(t.awaiting);
        CHECK(t.notes.back().from == ActorKind::human);
        CHECK_THAT(t.notes.back().text,
                   Catch::Contains(value) && Catch::Contains("already deployed"));
        // A second answer is refused and says why.
        const auto why = log.refused(
            QuestionAnswered{"q1", value, ""}, human(), RejectReason::question_not_pending);
        CHECK_THAT(why.message, Catch::Contains("already answered"));
    }
    SECTION("a timeout before its time is refused") {
        log.refused(QuestionTimedOut{"q1"}, system_actor(), RejectReason::not_due);
    }
    SECTION("timed out, then a late answer is refused") {
        log.advance_clock(31 * minute);
        const Ticket& t = log.must(QuestionTimedOut{"q1"}, system_actor());
        if (with_default) {
            CHECK(t.questions[0].status == QuestionStatus::answered);
            CHECK(t.questions[0].answer == *fallback);
            CHECK(t.questions[0].answered_by.kind == ActorKind::system);
            CHECK_FALSE(t.awaiting);
        } else {
            CHECK(t.questions[0].status == QuestionStatus::timed_out);
            CHECK(t.awaiting == (blocks ? std::optional{Awaiting::escalation} : std::nullopt));
        }
        const auto reason = with_default ? "already answered" : "timed out";
        const auto why = log.refused(
            QuestionAnswered{"q1", "sqlite", ""}, human(), RejectReason::question_not_pending);
        CHECK_THAT(why.message, Catch::Contains(reason));
    }
    SECTION("pending questions are cancelled when the ticket is done") {
        const Ticket& t = log.must(Cancelled{"no longer needed"});
        CHECK(t.questions[0].status == QuestionStatus::cancelled);
        const auto why = log.refused(
            QuestionAnswered{"q1", "sqlite", ""}, human(), RejectReason::question_not_pending);
        CHECK_THAT(why.message, Catch::Contains("cancelled"));
    }
}

TEST_CASE("answers are validated against the response type", "[reducer][question]") {
    struct AnswerRow {
        ResponseType type;
        const char* value;
        bool valid;
        const char* stored;
    };

    const AnswerRow row = GENERATE(values<AnswerRow>({
        {ResponseType::text, "use the cache", true, "use the cache"},
        {ResponseType::text, "", false, ""},
        {ResponseType::boolean, "true", true, "true"},
        {ResponseType::boolean, "false", true, "false"},
        {ResponseType::boolean, "yes", false, ""},
        {ResponseType::approval, "approve", true, "approve"},
        {ResponseType::approval, "reject", true, "reject"},
        {ResponseType::approval, "ok", false, ""},
        {ResponseType::choice, "postgres", true, "postgres"},
        {ResponseType::choice, "b", true, "postgres"},
        {ResponseType::choice, "SQLite", true, "sqlite"},
        {ResponseType::choice, "mysql", false, ""},
    }));
    CAPTURE(to_string(row.type), row.value);
    Log log{ticket_in(Status::planning)};
    log.must(ask(QuestionKind::blocking, row.type), agent(Status::planning));
    if (row.valid) {
        CHECK(log.must(QuestionAnswered{"q1", row.value, ""}).questions[0].answer == row.stored);
    } else {
        log.refused(QuestionAnswered{"q1", row.value, ""}, human(), RejectReason::invalid_answer);
    }
}

TEST_CASE("malformed questions are refused, never half-applied", "[reducer][question]") {
    Log log{ticket_in(Status::research)};
    QuestionAsked no_text = ask(QuestionKind::blocking);
    no_text.question.clear();
    log.refused(no_text, agent(), RejectReason::invalid_field);
    QuestionAsked choice_without_options = ask(QuestionKind::blocking, ResponseType::choice);
    choice_without_options.options.clear();
    log.refused(choice_without_options, agent(), RejectReason::invalid_field);
    log.refused(ask(QuestionKind::blocking, ResponseType::boolean, "maybe"),
                agent(),
                RejectReason::invalid_field);
    log.must(ask(QuestionKind::non_blocking), agent());
    log.refused(ask(QuestionKind::blocking), agent(), RejectReason::invalid_field);  // duplicate id
    log.refused(QuestionAnswered{"q9", "x", ""}, human(), RejectReason::unknown_question);
}

TEST_CASE("the ticket waits until every blocking question is answered", "[reducer][question]") {
    Log log{ticket_in(Status::implementing)};
    log.must(ask(QuestionKind::blocking), agent(Status::implementing));
    QuestionAsked second = ask(QuestionKind::error_recovery);
    second.question_id = "q2";
    log.must(second, agent(Status::implementing));
    CHECK(log.must(QuestionAnswered{"q1", "sqlite", ""}).awaiting == Awaiting::input);
    CHECK_FALSE(log.must(QuestionAnswered{"q2", "retry", ""}).awaiting);
}

TEST_CASE("a person withdraws a pending question: the ticket goes on without its answer",
          "[reducer][question]") {
    Log log{ticket_in(Status::implementing)};
    log.must(ask(QuestionKind::blocking), agent(Status::implementing));
    REQUIRE(log.ticket().awaiting == Awaiting::input);
    log.refused(QuestionCancelled{"q1", ""}, agent(Status::implementing), RejectReason::not_human);
    log.refused(QuestionCancelled{"q1", ""}, system_actor(), RejectReason::not_human);
    log.refused(QuestionCancelled{"q9", ""}, human(), RejectReason::unknown_question);
    const Ticket& t = log.must(QuestionCancelled{"q1", "the plan no longer needs a database"});
    CHECK(t.questions[0].status == QuestionStatus::cancelled);
    CHECK_FALSE(t.awaiting);  // back to the agent
    CHECK(t.notes.back().text.find("the plan no longer needs a database") != std::string::npos);
    // Withdrawn once: it cannot be answered or withdrawn again.
    log.refused(QuestionCancelled{"q1", ""}, human(), RejectReason::question_not_pending);
    log.refused(QuestionAnswered{"q1", "sqlite", ""}, human(), RejectReason::question_not_pending);
}

TEST_CASE("a pending blocking question holds the ticket through a passed gate",
          "[reducer][question]") {
    Log log{ticket_in(Status::planning, Awaiting::approval, Handoff::gate)};
    log.must(ask(QuestionKind::blocking), agent(Status::planning));  // asked after the gate opened
    const Ticket& t = log.must(VerdictGiven{Verdict::approved, "plan approved"});
    CHECK(t.status == Status::implementing);
    CHECK(t.awaiting == Awaiting::input);
    CHECK(t.handoff == Handoff::question);
    CHECK(std::holds_alternative<AwaitHuman>(next_action(t, Policy{})));
    CHECK_FALSE(log.must(QuestionAnswered{"q1", "sqlite", ""}).awaiting);
}

TEST_CASE("only the board times a question out, and not over a running agent",
          "[reducer][question][provenance]") {
    Log log{ticket_in(Status::research)};
    log.must(ask(QuestionKind::non_blocking, ResponseType::text, std::nullopt, 10), agent());
    log.advance_clock(11 * minute);
    log.refused(QuestionTimedOut{"q1"}, human(), RejectReason::not_human);

    Ticket running = ticket_in(Status::research);
    Question q;
    q.id = "q1";
    q.question = "Which backend?";
    q.timeout_at = t0;
    running.questions.push_back(q);
    running.run = Run{"r9", Status::research, t0, {}};
    Log busy{running};
    const Ticket& t = busy.must(QuestionTimedOut{"q1"}, system_actor());
    CHECK_FALSE(t.awaiting);  // a note, not an escalation over the agent's work
    CHECK(t.questions[0].status == QuestionStatus::timed_out);
}

TEST_CASE("approving a request for input needs the answer", "[reducer][verdict]") {
    Log log{ticket_in(Status::research, Awaiting::input)};
    log.refused(VerdictGiven{Verdict::approved, ""}, human(), RejectReason::feedback_required);
    CHECK_FALSE(log.must(VerdictGiven{Verdict::approved, "Yes, keep it documented"}).awaiting);
}

TEST_CASE("a blocking question asked during a run holds the ticket over the run's signal",
          "[reducer][question]") {
    const Signal signal = GENERATE(Signal::complete, Signal::checkpoint);
    Log log{ticket_in(Status::research)};
    log.must(RunStarted{"r1", Status::research, 1, 1, {}, {}}, system_actor());
    log.must(ask(QuestionKind::blocking), agent());
    RunFinished done = signalled(signal, "done, but see my question");
    done.run = "r1";
    const Ticket& t = log.must(done, system_actor());
    CHECK(t.status == Status::research);
    CHECK(t.awaiting == Awaiting::input);
    CHECK(t.handoff == Handoff::question);
    CHECK_FALSE(t.run);
    CHECK(t.notes.back().text ==
          "research run r1 asked a blocking question: the ticket waits "
          "for the answer, then the phase runs again");

    const Ticket& answered = log.must(QuestionAnswered{"q1", "sqlite", ""});
    CHECK_FALSE(answered.awaiting);
    CHECK(std::holds_alternative<StartRun>(next_action(answered, Policy{})));
}

TEST_CASE("a non-blocking question asked during a run does not hold it", "[reducer][question]") {
    Log log{ticket_in(Status::research)};
    log.must(RunStarted{"r1", Status::research, 1, 1, {}, {}}, system_actor());
    log.must(ask(QuestionKind::non_blocking), agent());
    RunFinished done = signalled(Signal::checkpoint, "step one");
    done.run = "r1";
    const Ticket& t = log.must(done, system_actor());
    CHECK(t.awaiting == Awaiting::checkpoint);
    CHECK(t.handoff == Handoff::signal);
}

namespace {

/// A log of `created` and `count` non-blocking questions `q1`..`qN`, stamped as the event log
/// would stamp them; more questions than the reducer scans before it indexes them.
std::vector<Event> log_with_questions(int count) {
    std::vector<Event> events;
    auto push = [&](Payload payload, Actor by) {
        const auto seq = static_cast<std::int64_t>(events.size()) + 1;
        events.push_back(Event{event_schema_version,
                               seq,
                               "e" + std::to_string(seq),
                               t0 + seq * 1000,
                               std::move(by),
                               std::move(payload)});
    };
    Created c;
    c.ticket = "PROJ-1";
    c.title = "Add retry to the uploader";
    push(c, human());
    for (int i = 1; i <= count; ++i) {
        QuestionAsked q = ask(QuestionKind::non_blocking);
        q.question_id = "q" + std::to_string(i);
        push(q, agent());
    }
    return events;
}

Event next_event(const Ticket& t, Payload payload, Actor by) {
    return Event{event_schema_version,
                 t.seq + 1,
                 "x",
                 t.updated_at + 1000,
                 std::move(by),
                 std::move(payload)};
}

QuestionAsked ask_id(std::string id) {
    QuestionAsked q = ask(QuestionKind::non_blocking);
    q.question_id = std::move(id);
    return q;
}

}  // namespace

TEST_CASE("a long history of questions still refuses every duplicate id and finds every answer",
          "[reducer][question]") {
    auto events = log_with_questions(200);
    const Folded folded = fold(events);
    REQUIRE_FALSE(folded.failure);
    REQUIRE(folded.ticket.questions.size() == 200);

    // The folded ticket is the one reduce() builds event by event from copies.
    Ticket stepped;
    for (const Event& e : events) {
        Reduced next = reduce(stepped, e);
        REQUIRE(next);
        stepped = next.value();
    }
    CHECK(folded.ticket == stepped);

    for (const std::string id : {"q1", "q17", "q200"}) {
        Ticket t = folded.ticket;
        const auto rejection = reduce_in_place(t, next_event(t, ask_id(id), agent()));
        REQUIRE(rejection);
        CHECK(rejection->reason == RejectReason::invalid_field);
        CHECK(rejection->message.find("already has a question " + id) != std::string::npos);
        CHECK(t == folded.ticket);
    }

    // fold() stops at a duplicate with the state before it.
    events.push_back(next_event(folded.ticket, ask_id("q150"), agent()));
    events.push_back(next_event(folded.ticket, ask_id("q201"), agent()));
    const Folded refused = fold(events);
    REQUIRE(refused.failure);
    CHECK(refused.failure->first == 201);
    CHECK(refused.ticket == folded.ticket);

    Ticket t = folded.ticket;
    REQUIRE_FALSE(reduce_in_place(t, next_event(t, QuestionAnswered{"q3", "sqlite", ""}, human())));
    CHECK(t.questions[2].status == QuestionStatus::answered);
    CHECK(t.questions[2].answer == "sqlite");
    const auto unknown =
        reduce_in_place(t, next_event(t, QuestionAnswered{"q201", "sqlite", ""}, human()));
    REQUIRE(unknown);
    CHECK(unknown->reason == RejectReason::unknown_question);
}

TEST_CASE("questions edited outside the reducer are looked up as they are now",
          "[reducer][question]") {
    Ticket t = fold(log_with_questions(100)).ticket;
    // Looked up once, so the ticket carries its lookup into the edits below.
    REQUIRE(reduce_in_place(t, next_event(t, ask_id("q50"), agent())));

    SECTION("truncated: a dropped id may be asked again") {
        t.questions.resize(40);
        CHECK_FALSE(reduce_in_place(t, next_event(t, ask_id("q50"), agent())));
        CHECK(reduce_in_place(t, next_event(t, ask_id("q40"), agent())));
    }
    SECTION("replaced, with as many questions") {
        std::vector<Question> other = t.questions;
        for (auto& q : other) q.id = "r" + q.id;
        t.questions = std::move(other);
        CHECK_FALSE(reduce_in_place(t, next_event(t, ask_id("q50"), agent())));
        CHECK(reduce_in_place(t, next_event(t, ask_id("rq50"), agent())));
    }
    SECTION("a copy, edited, leaves the original's lookup right") {
        Ticket copy = t;
        copy.questions.resize(10);
        CHECK(copy != t);
        CHECK_FALSE(reduce_in_place(copy, next_event(copy, ask_id("q60"), agent())));
        CHECK(reduce_in_place(t, next_event(t, ask_id("q60"), agent())));
    }
}

TEST_CASE("a pending question behind a long answered history still holds and is still cancelled",
          "[reducer][question]") {
    Ticket t = fold(log_with_questions(100)).ticket;
    auto apply = [&](Payload payload, Actor by) {
        const auto rejection = reduce_in_place(t, next_event(t, std::move(payload), std::move(by)));
        INFO((rejection ? rejection->message : std::string{}));
        REQUIRE_FALSE(rejection);
    };
    // q1 stays pending; every later question is answered.
    for (int i = 2; i <= 100; ++i)
        apply(QuestionAnswered{"q" + std::to_string(i), "yes", ""}, human());

    QuestionAsked blocking = ask(QuestionKind::blocking);
    blocking.question_id = "q101";
    apply(blocking, agent());
    CHECK(t.awaiting == Awaiting::input);
    CHECK(t.handoff == Handoff::question);

    // Answering the blocking one releases the ticket: q1 is pending but does not block.
    apply(QuestionAnswered{"q101", "yes", ""}, human());
    CHECK_FALSE(t.awaiting);

    apply(Cancelled{"out of scope"}, human());
    CHECK(t.questions.front().status == QuestionStatus::cancelled);
    CHECK(std::count_if(t.questions.begin(), t.questions.end(), [](const Question& q) {
              return q.status == QuestionStatus::answered;
          }) == 100);
}
