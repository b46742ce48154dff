#include "orchestrator/run_outcome.hpp"

#include "support/utf8.hpp"

#include <board/codec.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace board;
using namespace board::orchestrator;

namespace {

RunRecord record_with(std::string output, int exit_code = 0) {
    RunRecord r;
    r.run_id = "0003";
    r.phase = Status::research;
    r.exit_code = exit_code;
    r.duration_ms = 1500;
    r.output.report.message = std::move(output);
    r.artifact_path = "research.md";
    return r;
}

ArtifactRead artifact(std::optional<ArtifactStatus> status,
                      std::string sha = std::string(64, 'a')) {
    ArtifactRead a;
    a.front_matter.status = status;
    a.front_matter.summary = "what we found";
    a.sha256 = std::move(sha);
    return a;
}

template <class T>
std::vector<const T*> all_of_type(std::vector<Authored>&&) = delete;  // would dangle

template <class T>
std::size_t count_of(const std::vector<Authored>& batch) {
    return static_cast<std::size_t>(
        std::count_if(batch.begin(), batch.end(), [](const Authored& a) {
            return std::holds_alternative<T>(a.payload);
        }));
}

template <class T>
std::vector<const T*> all_of_type(const std::vector<Authored>& batch) {
    std::vector<const T*> out;
    for (const auto& a : batch)
        if (const auto* p = std::get_if<T>(&a.payload)) out.push_back(p);
    return out;
}

}  // namespace

TEST_CASE("a completed run records its artifact (by the agent) then run-finished (by the board)") {
    RunRecord r = record_with("<promise>COMPLETE: all found</promise>\n");
    r.artifact = artifact(ArtifactStatus::complete);
    r.output.report.cost_usd = 0.5;
    r.output.report.session = "s-1";
    r.output.report.tokens = {1200, 340, 5000, 60};
    const auto batch = outcome_batch(Ticket{}, r);
    REQUIRE(batch.size() == 2);
    const auto* recorded = std::get_if<ArtifactRecorded>(&batch[0].payload);
    REQUIRE(recorded);
    CHECK(batch[0].by == Actor{ActorKind::agent, "research"});
    CHECK(recorded->status == ArtifactStatus::complete);
    CHECK(recorded->path == "research.md");
    CHECK(recorded->sha256 == std::string(64, 'a'));
    CHECK_FALSE(recorded->gate.has_value());
    const auto* finished = std::get_if<RunFinished>(&batch[1].payload);
    REQUIRE(finished);
    CHECK(batch[1].by.kind == ActorKind::system);
    CHECK(finished->run == "0003");
    CHECK(finished->signal == Signal::complete);
    CHECK(finished->context == "all found");
    CHECK(finished->cost_usd == 0.5);
    CHECK(finished->session == "s-1");
    CHECK(finished->duration_ms == 1500);
    CHECK(finished->input_tokens == 1200);
    CHECK(finished->output_tokens == 340);
    CHECK(finished->cache_read_tokens == 5000);
    CHECK(finished->cache_write_tokens == 60);
    CHECK(finished->error.empty());
}

TEST_CASE("a failed run carries the agent's own error, and whether retrying can help") {
    RunRecord r = record_with("", 1);
    r.output.report.error = "API Error: 401 {\"type\":\"authentication_error\"}";
    r.output.report.retry = Retry::futile;
    const auto failed = outcome_batch(Ticket{}, r);
    auto finished = all_of_type<RunFinished>(failed);
    REQUIRE(finished.size() == 1);
    CHECK(finished[0]->exit_code == 1);
    CHECK(finished[0]->error == r.output.report.error);
    CHECK(finished[0]->permanent);

    // An agent that says it failed fails, whatever its exit code.
    RunRecord in_output = record_with("<promise>COMPLETE</promise>", 0);
    in_output.output.report.failed_in_output = true;
    in_output.output.report.error = "API Error: Unable to connect to API (ConnectionRefused)";
    const auto batch = outcome_batch(Ticket{}, in_output);
    finished = all_of_type<RunFinished>(batch);
    REQUIRE(finished.size() == 1);
    CHECK(finished[0]->error == in_output.output.report.error);
    CHECK_FALSE(finished[0]->permanent);
}

TEST_CASE("an artifact without front matter is recorded in progress") {
    RunRecord r = record_with("<promise>COMPLETE</promise>");
    r.artifact = artifact(std::nullopt);
    const auto batch = outcome_batch(Ticket{}, r);
    const auto recorded = all_of_type<ArtifactRecorded>(batch);
    REQUIRE(recorded.size() == 1);
    CHECK(recorded[0]->status == ArtifactStatus::in_progress);
}

TEST_CASE("a rejected artifact left unchanged is not recorded again") {
    Ticket t;
    t.artifact(ArtifactKind::research) = Artifact{
        "research.md", ArtifactStatus::rejected, "what we found", std::string(64, 'a'), 1, 1};
    RunRecord r = record_with("<promise>COMPLETE</promise>");
    r.artifact = artifact(ArtifactStatus::complete);
    CHECK(count_of<ArtifactRecorded>(outcome_batch(t, r)) == 0);
    r.artifact = artifact(ArtifactStatus::complete, std::string(64, 'b'));  // rewritten
    CHECK(count_of<ArtifactRecorded>(outcome_batch(t, r)) == 1);
}

TEST_CASE("questions are numbered after the ticket's, and a failed run asks none") {
    Ticket t;
    t.questions.resize(2);
    const std::string output =
        "<question>{\"question\": \"SQLite or Postgres?\", \"type\": \"blocking\"}</question>\n"
        "<question>{\"question\": \"Also this?\", \"type\": \"non_blocking\"}</question>\n";
    const auto batch = outcome_batch(t, record_with(output));
    const auto asked = all_of_type<QuestionAsked>(batch);
    REQUIRE(asked.size() == 2);
    CHECK(asked[0]->question_id == "q3");
    CHECK(asked[1]->question_id == "q4");
    CHECK(count_of<QuestionAsked>(outcome_batch(t, record_with(output, 1))) == 0);
}

TEST_CASE("questions past max_questions are not asked, and a note names each of them") {
    Ticket t;
    std::string output;
    for (int i = 1; i <= 4; ++i)
        output +=
            "<question>{\"question\": \"Question number " + std::to_string(i) + "?\"}</question>\n";
    RunRecord r = record_with(output);
    r.max_questions = 2;
    const auto batch = outcome_batch(t, r);
    const auto asked = all_of_type<QuestionAsked>(batch);
    REQUIRE(asked.size() == 2);
    CHECK(asked[1]->question == "Question number 2?");
    const auto notes = all_of_type<NoteAdded>(batch);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0]->text.find("asked 4 questions; agents.research.max_questions is 2") !=
          std::string::npos);
    CHECK(notes[0]->text.find("Question number 3?") != std::string::npos);
    CHECK(notes[0]->text.find("Question number 4?") != std::string::npos);
}

TEST_CASE("several signals, malformed tags and bad questions leave one board note each") {
    const std::string output =
        "<promise>CHECKPOINT: "
        "a</promise>\n<promise>complete</promise>\n<promise>COMPLETE</promise>\n"
        "<question>{not json}</question>\n";
    const auto batch = outcome_batch(Ticket{}, record_with(output));
    const auto notes = all_of_type<NoteAdded>(batch);
    REQUIRE(notes.size() == 2);
    CHECK(notes[0]->text.find("several signals (CHECKPOINT, COMPLETE); CHECKPOINT counts") !=
          std::string::npos);
    CHECK(notes[0]->text.find("unknown signal") != std::string::npos);
    CHECK(notes[1]->text.find("questions dropped") != std::string::npos);
    CHECK(std::get<RunFinished>(batch.back().payload).signal == Signal::checkpoint);
}

TEST_CASE("the batch is accepted by the reducer on a ticket whose run is in flight") {
    Ticket t;
    const auto apply = [&](Payload p, Actor by, UnixMillis at) {
        Event e{event_schema_version,
                t.seq + 1,
                "e" + std::to_string(t.seq + 1),
                at,
                std::move(by),
                std::move(p)};
        auto next = reduce(t, e);
        INFO((next ? std::string{} : next.error().message));
        REQUIRE(next.has_value());
        t = next.value();
    };
    Created c;
    c.ticket = "PROJ-1";
    c.title = "t";
    apply(c, Actor{ActorKind::human, "ana"}, 1000);
    apply(RunStarted{"0001", Status::research, 1, 1, {}, {}}, Actor{}, 2000);
    RunRecord r = record_with("<promise>COMPLETE</promise>\n");
    r.run_id = "0001";
    r.artifact = artifact(ArtifactStatus::complete);
    for (auto& item : outcome_batch(t, r)) apply(item.payload, item.by, 3000);
    CHECK(t.status == Status::ready);
    CHECK_FALSE(t.run.has_value());
}

TEST_CASE("what an agent writes is cut to the board's limits, with one note naming each cut") {
    // A 20 MB summary, a question with 80 long options, a long error and context: every event
    // stays small, valid UTF-8 stays valid, and the note says what was cut.
    std::string options;
    for (int i = 0; i < 80; ++i)
        options += std::string{i ? "," : ""} + R"({"label": ")" + std::string(3000, 'l') + "\"}";
    const std::string long_question = std::string(9000, 'q') + "\xC3\xA9";  // ends in é
    RunRecord r = record_with("<question>{\"question\": \"" + long_question +
                              "\", \"type\": \"blocking\", \"options\": [" + options +
                              "]}</question>\n<promise>COMPLETE: " + std::string(40000, 'c') +
                              "</promise>\n");
    r.artifact = artifact(ArtifactStatus::complete);
    r.artifact->front_matter.summary = std::string(20u << 20, 's');
    r.agent_notes = {std::string(100000, 'n'), "a short note"};

    const auto batch = outcome_batch(Ticket{}, r);
    const auto artifacts = all_of_type<ArtifactRecorded>(batch);
    REQUIRE(artifacts.size() == 1);
    CHECK(artifacts[0]->summary.size() <= AgentTextLimits::summary);
    CHECK(artifacts[0]->summary.rfind("\u2026[cut]") == artifacts[0]->summary.size() - 8);
    const auto questions = all_of_type<QuestionAsked>(batch);
    REQUIRE(questions.size() == 1);
    CHECK(questions[0]->question.size() <= AgentTextLimits::question);
    CHECK(questions[0]->options.size() == AgentTextLimits::options);
    CHECK(questions[0]->options.front().label.size() <= AgentTextLimits::option);
    const auto finished = all_of_type<RunFinished>(batch);
    REQUIRE(finished.size() == 1);
    CHECK(finished[0]->context.size() <= AgentTextLimits::context);
    const auto notes = all_of_type<NoteAdded>(batch);
    REQUIRE(notes.size() == 3);  // the agent's two, and the board's about the cuts
    CHECK(notes[0]->text.size() <= AgentTextLimits::note);
    CHECK(notes[1]->text == "a short note");
    const std::string& cuts = notes[2]->text;
    CHECK_THAT(cuts, Catch::Matchers::Contains("research run 0003: cut to the board's limits"));
    CHECK_THAT(cuts, Catch::Matchers::Contains("research.md summary: 20971520 bytes, cut to 4096"));
    CHECK_THAT(cuts, Catch::Matchers::Contains("question q1: 80 options, the first 50 kept"));
    CHECK_THAT(cuts, Catch::Matchers::Contains("note 1: 100000 bytes"));
    CHECK_THAT(cuts,
               Catch::Matchers::Contains(
                   "question q1 option labels: 50 cut to 1024 bytes (the longest 3000)"));
    for (const auto& item : batch) {
        const std::string line = encode_event(Event{1, 1, "e", 0, item.by, item.payload});
        // At most 50 options of four 1 KB fields: far below a log line's limit.
        CHECK(line.size() < 256u << 10);
        CHECK(valid_utf8_prefix(line) == line.size());
    }
}

TEST_CASE("a summary cut once is not recorded again by the next run") {
    RunRecord r = record_with("<promise>COMPLETE</promise>\n");
    r.artifact = artifact(ArtifactStatus::complete);
    r.artifact->front_matter.summary = std::string(10000, 's');
    const auto first = outcome_batch(Ticket{}, r);
    const auto recorded = all_of_type<ArtifactRecorded>(first);
    REQUIRE(recorded.size() == 1);
    Ticket t;
    t.artifact(ArtifactKind::research) = Artifact{
        "research.md", ArtifactStatus::complete, recorded[0]->summary, std::string(64, 'a'), 1, 1};
    CHECK(count_of<ArtifactRecorded>(outcome_batch(t, r)) == 0);
}

TEST_CASE("output past the run's cap is named in a note") {
    RunRecord r = record_with("<promise>COMPLETE</promise>\n");
    r.phase = Status::implementing;
    r.output.bytes = 245'000'000;
    r.output_cap = 50u << 20;
    r.output_dropped = 245'000'000 - (50u << 20);
    const auto batch = outcome_batch(Ticket{}, r);
    const auto notes = all_of_type<NoteAdded>(batch);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0]->text ==
          "implementing run 0003: the agent printed 245000000 bytes; its log keeps the first 50MB "
          "(agents.implementing.max_output) and the other 192571200 bytes were dropped");
}
