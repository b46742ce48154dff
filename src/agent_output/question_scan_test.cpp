// scan_questions against spec/state-machine.md §6 and the 003 `ask_question` shape: every
// kind and response type, defaults and aliases, each wrong field, fences and several blocks.

#include <board/agent_output.hpp>

#include <catch2/catch.hpp>

using namespace board;

namespace {

std::string block(std::string_view json) {
    return "<question>" + std::string{json} + "</question>";
}

QuestionOption option(std::string id, std::string label, std::string value, std::string desc = {}) {
    return QuestionOption{std::move(id), std::move(label), std::move(value), std::move(desc)};
}

QuestionAsked asked(std::string text,
                    QuestionKind kind = QuestionKind::blocking,
                    ResponseType type = ResponseType::text) {
    QuestionAsked q;
    q.question = std::move(text);
    q.kind = kind;
    q.response_type = type;
    return q;
}

void check_same(const QuestionAsked& got, const QuestionAsked& want) {
    CHECK(got.question_id.empty());
    CHECK(got.question == want.question);
    CHECK(to_string(got.kind) == to_string(want.kind));
    CHECK(to_string(got.response_type) == to_string(want.response_type));
    REQUIRE(got.options.size() == want.options.size());
    for (std::size_t i = 0; i < want.options.size(); ++i) {
        CAPTURE(i);
        CHECK(got.options[i].id == want.options[i].id);
        CHECK(got.options[i].label == want.options[i].label);
        CHECK(got.options[i].value == want.options[i].value);
        CHECK(got.options[i].description == want.options[i].description);
    }
    CHECK(got.context == want.context);
    CHECK(got.timeout_minutes == want.timeout_minutes);
    CHECK(got.default_response == want.default_response);
    CHECK(got == want);
}

}  // namespace

TEST_CASE("every kind with every response type", "[question]") {
    const QuestionKind kind = GENERATE(QuestionKind::blocking,
                                       QuestionKind::non_blocking,
                                       QuestionKind::approval,
                                       QuestionKind::error_recovery);
    const ResponseType type = GENERATE(
        ResponseType::text, ResponseType::choice, ResponseType::boolean, ResponseType::approval);
    CAPTURE(to_string(kind), to_string(type));
    const bool choice = type == ResponseType::choice;
    const std::string json =
        R"({"question": "Proceed?", "type": ")" + std::string{to_string(kind)} +
        R"(", "responseType": ")" + std::string{to_string(type)} + "\"" +
        (choice ? R"(, "options": [{"label": "Yes"}, {"label": "No"}])" : "") + "}";
    const QuestionScan scan = scan_questions("Before.\n" + block(json) + "\nAfter.\n");
    CHECK(scan.warnings.empty());
    REQUIRE(scan.questions.size() == 1);
    QuestionAsked want = asked("Proceed?", kind, type);
    if (choice) want.options = {option("1", "Yes", "Yes"), option("2", "No", "No")};
    check_same(scan.questions[0], want);
}

TEST_CASE("fields, defaults and aliases", "[question]") {
    struct Row {
        const char* what;
        std::string json;
        QuestionAsked want;
    };

    const auto with = [](QuestionAsked q, auto change) {
        change(q);
        return q;
    };
    const Row row = GENERATE_COPY(values<Row>({
        {"every field",
         R"({"question": "Which database?", "type": "non_blocking", "responseType": "choice",
             "options": [{"id": "pg", "label": "PostgreSQL", "value": "postgres",
                          "description": "the default"},
                         {"label": "SQLite", "value": "sqlite"}],
             "context": "we need JSON columns", "timeoutMinutes": 45, "defaultResponse": "pg"})",
         with(asked("Which database?", QuestionKind::non_blocking, ResponseType::choice),
              [](QuestionAsked& q) {
                  q.options = {option("pg", "PostgreSQL", "postgres", "the default"),
                               option("2", "SQLite", "sqlite")};
                  q.context = "we need JSON columns";
                  q.timeout_minutes = 45;
                  q.default_response = "postgres";
              })},
        {"only the question: blocking text", R"({"question": "Why?"})", asked("Why?")},
        {"the question is trimmed", R"({"question": "  Why?\n"})", asked("Why?")},
        {"unicode text", R"({"question": "Déployer ? 🚀"})", asked("Déployer ? 🚀")},
        {"approval questions default to approval answers",
         R"({"question": "Deploy?", "type": "approval"})",
         asked("Deploy?", QuestionKind::approval, ResponseType::approval)},
        {"null reads as absent",
         R"({"question": "Q", "type": null, "responseType": null, "options": null,
             "context": null, "timeoutMinutes": null, "defaultResponse": null})",
         asked("Q")},
        {"snake_case aliases",
         R"({"question": "Q", "response_type": "boolean", "timeout_minutes": 10,
             "default_response": false})",
         with(asked("Q", QuestionKind::blocking, ResponseType::boolean),
              [](QuestionAsked& q) {
                  q.timeout_minutes = 10;
                  q.default_response = "false";
              })},
        {"boolean default as JSON true",
         R"({"question": "Q", "responseType": "boolean", "defaultResponse": true})",
         with(asked("Q", QuestionKind::blocking, ResponseType::boolean),
              [](QuestionAsked& q) { q.default_response = "true"; })},
        {"boolean default as a string",
         R"({"question": "Q", "responseType": "boolean", "defaultResponse": "false"})",
         with(asked("Q", QuestionKind::blocking, ResponseType::boolean),
              [](QuestionAsked& q) { q.default_response = "false"; })},
        {"approval default",
         R"({"question": "Q", "type": "approval", "defaultResponse": "reject"})",
         with(asked("Q", QuestionKind::approval, ResponseType::approval),
              [](QuestionAsked& q) { q.default_response = "reject"; })},
        {"a text default may be a number",
         R"({"question": "Q", "defaultResponse": 42})",
         with(asked("Q"), [](QuestionAsked& q) { q.default_response = "42"; })},
        {"an object context is kept as JSON text",
         R"({"question": "Q", "context": {"file": "a.cpp", "line": 3}})",
         with(asked("Q"), [](QuestionAsked& q) { q.context = R"({"file":"a.cpp","line":3})"; })},
        {"fractional minutes round up",
         R"({"question": "Q", "timeoutMinutes": 2.5})",
         with(asked("Q"), [](QuestionAsked& q) { q.timeout_minutes = 3; })},
        {"huge timeouts stay an int",
         R"({"question": "Q", "timeoutMinutes": 1e300})",
         with(asked("Q"), [](QuestionAsked& q) { q.timeout_minutes = 1'000'000; })},
        {"choice options: label or value fill each other, ids by position, numbers as text",
         R"({"question": "Q", "responseType": "choice",
             "options": [{"label": "Red"}, {"value": "green"}, {"value": 3, "label": "Three"}],
             "defaultResponse": "Three"})",
         with(asked("Q", QuestionKind::blocking, ResponseType::choice),
              [](QuestionAsked& q) {
                  q.options = {option("1", "Red", "Red"),
                               option("2", "green", "green"),
                               option("3", "Three", "3")};
                  q.default_response = "3";
              })},
        {"a choice default given by value",
         R"({"question": "Q", "responseType": "choice",
             "options": [{"id": "a", "label": "A", "value": "alpha"}],
             "defaultResponse": "alpha"})",
         with(asked("Q", QuestionKind::blocking, ResponseType::choice),
              [](QuestionAsked& q) {
                  q.options = {option("a", "A", "alpha")};
                  q.default_response = "alpha";
              })},
        {"unknown fields are ignored",
         R"({"question": "Q", "priority": "high", "id": 7})",
         asked("Q")},
        {"a default in 003's object form {type, value, text}",
         R"({"question": "Q", "responseType": "boolean",
             "defaultResponse": {"type": "boolean", "value": false, "text": "safe"}})",
         with(asked("Q", QuestionKind::blocking, ResponseType::boolean),
              [](QuestionAsked& q) { q.default_response = "false"; })},
        {"an object default without its type",
         R"({"question": "Q", "defaultResponse": {"value": "sqlite"}})",
         with(asked("Q"), [](QuestionAsked& q) { q.default_response = "sqlite"; })},
        {"a body in a ```json fence",
         "\n```json\n{\"question\": \"Q\", \"type\": \"error_recovery\"}\n```\n",
         asked("Q", QuestionKind::error_recovery)},
        {"a body in a ~~~ fence", "~~~\n{\"question\": \"Q\"}\n~~~", asked("Q")},
    }));
    CAPTURE(row.what, row.json);
    const QuestionScan scan = scan_questions(block(row.json));
    CHECK(scan.warnings.empty());
    REQUIRE(scan.questions.size() == 1);
    check_same(scan.questions[0], row.want);
}

TEST_CASE("a malformed block is dropped with a warning naming the line and field", "[question]") {
    struct Row {
        const char* what;
        std::string json;
        std::string warning;  ///< after `<question> at line 3: `
    };

    const Row row = GENERATE(values<Row>({
        {"not JSON", "question: why?", "invalid JSON at line 3 (syntax error)"},
        {"trailing comma", R"({"question": "Q",})", "invalid JSON at line 3 (syntax error)"},
        {"cut short", R"({"question": "Q")", "invalid JSON at line 3 (incomplete JSON)"},
        {"the error's own line",
         "{\n  \"question\": \"Q\"\n  \"type\": \"blocking\"\n}",
         "invalid JSON at line 5 (syntax error)"},
        {"text after the JSON",
         R"({"question": "Q"} thanks)",
         "invalid JSON at line 3 (extra data)"},
        {"empty block", "", "invalid JSON at line 3 (incomplete JSON)"},
        {"invalid UTF-8", "{\"question\": \"Q\xff\"}", "invalid JSON at line 3 (syntax error)"},
        {"not an object", R"(["Q"])", "the JSON is not an object"},
        {"an object default without a value",
         R"({"question": "Q", "defaultResponse": {"type": "text"}})",
         R"("defaultResponse" object needs a "value")"},
        {"an object default of another type",
         R"({"question": "Q", "defaultResponse": {"type": "boolean", "value": true}})",
         R"("defaultResponse" has "type" "boolean", not the question's responseType "text")"},
        {"missing question", R"({"type": "blocking"})", R"(missing "question")"},
        {"question not a string", R"({"question": 42})", R"("question" must be a string)"},
        {"empty question", R"({"question": "  "})", R"("question" is empty)"},
        {"unknown type",
         R"({"question": "Q", "type": "urgent"})",
         R"("type" "urgent" is not one of blocking, non_blocking, approval, error_recovery)"},
        {"type not a string",
         R"({"question": "Q", "type": 1})",
         R"("type" must be a string, one of blocking, non_blocking, approval, error_recovery)"},
        {"response types are case-sensitive",
         R"({"question": "Q", "responseType": "Choice"})",
         R"("responseType" "Choice" is not one of text, choice, boolean, approval)"},
        {"unknown response type in the alias",
         R"({"question": "Q", "response_type": "number"})",
         R"("responseType" "number" is not one of text, choice, boolean, approval)"},
        {"options not an array",
         R"({"question": "Q", "options": {"label": "A"}})",
         R"("options" must be an array)"},
        {"an option not an object",
         R"({"question": "Q", "options": ["A"]})",
         R"("options[0]" must be an object)"},
        {"an option with neither label nor value",
         R"({"question": "Q", "options": [{"description": "?"}]})",
         R"("options[0]" needs a "label" or a "value")"},
        {"an option label not a string",
         R"({"question": "Q", "options": [{"label": "A"}, {"label": 2}]})",
         R"("options[1].label" must be a string)"},
        {"an option id not a scalar",
         R"({"question": "Q", "options": [{"id": {}, "label": "A"}]})",
         R"("options[0].id" must be a string or number)"},
        {"duplicate option ids",
         R"({"question": "Q", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]})",
         R"("options" has two options with id "a")"},
        {"choice without options",
         R"({"question": "Q", "responseType": "choice"})",
         R"(responseType "choice" needs a non-empty "options")"},
        {"choice with no options",
         R"({"question": "Q", "responseType": "choice", "options": []})",
         R"(responseType "choice" needs a non-empty "options")"},
        {"timeout as a string",
         R"({"question": "Q", "timeoutMinutes": "30"})",
         R"("timeoutMinutes" must be a positive number)"},
        {"zero timeout",
         R"({"question": "Q", "timeoutMinutes": 0})",
         R"("timeoutMinutes" must be a positive number)"},
        {"negative timeout",
         R"({"question": "Q", "timeout_minutes": -5})",
         R"("timeoutMinutes" must be a positive number)"},
        {"boolean default not a boolean",
         R"({"question": "Q", "responseType": "boolean", "defaultResponse": "yes"})",
         R"("defaultResponse" must be true or false for responseType "boolean" (got "yes"))"},
        {"approval default not approve/reject",
         R"({"question": "Q", "type": "approval", "defaultResponse": true})",
         R"("defaultResponse" must be "approve" or "reject" for responseType "approval")"
         R"( (got "true"))"},
        {"choice default not an option",
         R"({"question": "Q", "responseType": "choice", "options": [{"label": "A"}],
             "defaultResponse": "maybe"})",
         R"("defaultResponse" must name one of the options (got "maybe"))"},
        {"text default an object that is not a response",
         R"({"question": "Q", "defaultResponse": {"a": 1}})",
         R"("defaultResponse" object needs a "value")"},
        {"text default a list",
         R"({"question": "Q", "defaultResponse": ["a"]})",
         R"("defaultResponse" must be a string)"},
    }));
    CAPTURE(row.what, row.json);
    const QuestionScan scan = scan_questions("intro\n\n" + block(row.json) + "\n");
    CHECK(scan.questions.empty());
    CHECK(scan.warnings == std::vector<std::string>{"<question> at line 3: " + row.warning});
}

TEST_CASE("question blocks in fences are ignored, broken tags warned about", "[question]") {
    struct Row {
        const char* what;
        std::string output;
        std::vector<std::string> questions;
        std::vector<std::string> warnings;
    };

    const std::string q1 = block(R"({"question": "One?"})");
    const std::string q2 = block(R"({"question": "Two?"})");
    const Row row = GENERATE_COPY(values<Row>({
        {"backtick fence", "```\n" + q1 + "\n```\n" + q2, {"Two?"}, {}},
        {"tilde fence", "~~~markdown\n" + q1 + "\n~~~\n" + q2, {"Two?"}, {}},
        {"unclosed fence", q1 + "\n```\n" + q2 + "\n", {"One?"}, {}},
        {"unterminated",
         "a\n<question>{\"question\": \"x\"}\n",
         {},
         {"unterminated <question> at line 2"}},
        {"nested",
         "<question>" + q1,
         {"One?"},
         {"unterminated <question> at line 1 (another <question> starts before its </question>)"}},
        {"stray close", "</question>\n" + q2, {"Two?"}, {"stray </question> at line 1"}},
        {"signals are not questions", "<promise>INPUT_NEEDED: why?</promise>", {}, {}},
    }));
    CAPTURE(row.what, row.output);
    const QuestionScan scan = scan_questions(row.output);
    std::vector<std::string> texts;
    for (const auto& q : scan.questions) texts.push_back(q.question);
    CHECK(texts == row.questions);
    CHECK(scan.warnings == row.warnings);
}

TEST_CASE("several questions keep their order, and a bad one does not hide the others",
          "[question]") {
    const std::string output =
        "Some questions.\n" + block(R"({"question": "First?", "type": "non_blocking"})") +
        "\nthen\n" + block(R"({"question": "Broken?", "type": "soon"})") + "\n" +
        block(R"({"question": "Third?", "responseType": "boolean"})") +
        block(R"({"question": "Fourth?"})");
    const QuestionScan scan = scan_questions(output);
    REQUIRE(scan.questions.size() == 3);
    check_same(scan.questions[0], asked("First?", QuestionKind::non_blocking));
    check_same(scan.questions[1], asked("Third?", QuestionKind::blocking, ResponseType::boolean));
    check_same(scan.questions[2], asked("Fourth?"));
    CHECK(scan.warnings ==
          std::vector<std::string>{
              R"(<question> at line 4: "type" "soon" is not one of blocking, non_blocking, )"
              "approval, error_recovery"});
}

TEST_CASE("question warnings are capped", "[question]") {
    std::string output;
    for (int i = 0; i < 25; ++i) output += block("{") + "\n";
    const QuestionScan scan = scan_questions(output);
    CHECK(scan.questions.empty());
    REQUIRE(scan.warnings.size() == max_scan_warnings + 1);
    CHECK(scan.warnings.front() ==
          "<question> at line 1: invalid JSON at line 1 (incomplete JSON)");
    CHECK(scan.warnings.back() == "... and 5 more warnings");
}
