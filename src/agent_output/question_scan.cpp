// scan_questions: structured questions in an agent's output (spec/state-machine.md §6).

#include "agent_output/markup.hpp"
#include "agent_output/text.hpp"

#include <board/agent_output.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace board {
namespace {

namespace json = boost::json;
using agent_output::LineCounter;
using agent_output::quoted;
using agent_output::TagEvent;
using agent_output::trim;
using agent_output::Warnings;

/// A field-level error: the block is dropped and the message becomes a warning. Thrown
/// only inside this file; scan_questions catches every one.
struct Invalid : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// The value of `key` (or its snake_case `alias`); nullptr when absent or null, which mean
/// the same thing here.
const json::value* field(const json::object& o, std::string_view key, std::string_view alias = {}) {
    const json::value* v = o.if_contains(key);
    if ((v == nullptr || v->is_null()) && !alias.empty()) v = o.if_contains(alias);
    return v == nullptr || v->is_null() ? nullptr : v;
}

std::string name(std::string_view key) {
    return "\"" + std::string{key} + "\"";
}

/// Strings, numbers and booleans as text (what a human would type as an answer).
std::optional<std::string> scalar_text(const json::value& v) {
    if (const auto* s = v.if_string()) return std::string{*s};
    if (const auto* b = v.if_bool()) return *b ? "true" : "false";
    if (v.is_number()) return json::serialize(v);
    return std::nullopt;
}

template <class Enum>
Enum enum_field(const json::object& o,
                std::string_view key,
                std::string_view alias,
                Enum fallback,
                std::string_view allowed) {
    const json::value* v = field(o, key, alias);
    if (v == nullptr) return fallback;
    const auto* s = v->if_string();
    if (s == nullptr) {
        throw Invalid{name(key) + " must be a string, one of " + std::string{allowed}};
    }
    const auto parsed = parse<Enum>(std::string_view{*s});
    if (!parsed) {
        throw Invalid{name(key) + " " + quoted(*s) + " is not one of " + std::string{allowed}};
    }
    return *parsed;
}

/// An option's text field; `where` is `options[2]`. Ids and values may be numbers (what a
/// human types to answer); labels and descriptions are display text.
std::string option_text(const json::object& o, std::string_view where, std::string_view key) {
    const json::value* f = field(o, key);
    if (f == nullptr) return {};
    const bool any_scalar = key == "id" || key == "value";
    std::optional<std::string> text;
    if (any_scalar) {
        text = scalar_text(*f);
    } else if (const auto* str = f->if_string()) {
        text = std::string{*str};
    }
    if (!text) {
        throw Invalid{"\"" + std::string{where} + "." + std::string{key} + "\" must be a " +
                      (any_scalar ? "string or number" : "string")};
    }
    return *text;
}

QuestionOption option_of(const json::value& v, std::size_t index) {
    const std::string where = "options[" + std::to_string(index) + "]";
    const auto* o = v.if_object();
    if (o == nullptr) throw Invalid{name(where) + " must be an object"};
    QuestionOption option{option_text(*o, where, "id"),
                          option_text(*o, where, "label"),
                          option_text(*o, where, "value"),
                          option_text(*o, where, "description")};
    if (option.label.empty() && option.value.empty()) {
        throw Invalid{name(where) + R"( needs a "label" or a "value")"};
    }
    if (option.label.empty()) option.label = option.value;
    if (option.value.empty()) option.value = option.label;
    if (option.id.empty()) option.id = std::to_string(index + 1);
    return option;
}

std::vector<QuestionOption> options_of(const json::value& v) {
    const auto* array = v.if_array();
    if (array == nullptr) throw Invalid{R"("options" must be an array)"};
    std::vector<QuestionOption> options;
    for (std::size_t i = 0; i < array->size(); ++i) {
        QuestionOption option = option_of((*array)[i], i);
        // Ids are what `board answer` names: they must tell the options apart.
        const auto same_id = [&](const QuestionOption& o) { return o.id == option.id; };
        if (std::any_of(options.begin(), options.end(), same_id)) {
            throw Invalid{R"("options" has two options with id )" + quoted(option.id)};
        }
        options.push_back(std::move(option));
    }
    return options;
}

int timeout_of(const json::value& v) {
    // Whole minutes, rounded up: a question never times out before the agent asked. The cap
    // only keeps the number an int; the reducer clamps to the spec's [5, 1440].
    constexpr double cap = 1'000'000;
    json::error_code ec;
    const double minutes = v.is_number() ? v.to_number<double>(ec) : 0;
    if (ec || !std::isfinite(minutes) || minutes <= 0) {
        throw Invalid{R"("timeoutMinutes" must be a positive number)"};
    }
    return static_cast<int>(std::ceil(std::min(minutes, cap)));
}

std::string default_of(const json::value& given,
                       ResponseType type,
                       const std::vector<QuestionOption>& options) {
    // 003's QuestionResponse object, `{type, value, text}`, names its value; the bare value is
    // the short form. A `type` that is not the question's would answer another question.
    const json::value* value = &given;
    if (const auto* o = given.if_object()) {
        value = o->if_contains("value");
        if (value == nullptr) throw Invalid{R"("defaultResponse" object needs a "value")"};
        if (const auto* named = o->if_contains("type")) {
            const auto* s = named->if_string();
            if (s == nullptr || *s != to_string(type))
                throw Invalid{R"("defaultResponse" has "type" )" + json::serialize(*named) +
                              R"(, not the question's responseType ")" +
                              std::string{to_string(type)} + "\""};
        }
    }
    const json::value& v = *value;
    const auto text = scalar_text(v);
    const std::string got = text ? " (got " + quoted(*text) + ")" : "";
    switch (type) {
        case ResponseType::text:
            if (text) return *text;
            throw Invalid{R"("defaultResponse" must be a string)"};
        case ResponseType::boolean:
            if (text == "true" || text == "false") return *text;
            throw Invalid{R"("defaultResponse" must be true or false for responseType "boolean")" +
                          got};
        case ResponseType::approval:
            if (text == "approve" || text == "reject") return *text;
            throw Invalid{
                R"("defaultResponse" must be "approve" or "reject" for responseType "approval")" +
                got};
        case ResponseType::choice: {
            // Stored as the option's value, whichever of id, value or label named it.
            const auto named = [&](const QuestionOption& o) {
                return text == o.id || text == o.value || text == o.label;
            };
            const auto it = std::find_if(options.begin(), options.end(), named);
            if (it != options.end()) return it->value;
            throw Invalid{R"("defaultResponse" must name one of the options)" + got};
        }
    }
    return {};
}

QuestionAsked question_of(const json::value& root) {
    const auto* o = root.if_object();
    if (o == nullptr) throw Invalid{"the JSON is not an object"};

    QuestionAsked q;
    const json::value* text = field(*o, "question");
    if (text == nullptr) throw Invalid{R"(missing "question")"};
    const auto* s = text->if_string();
    if (s == nullptr) throw Invalid{R"("question" must be a string)"};
    q.question = trim(std::string_view{*s});
    if (q.question.empty()) throw Invalid{R"("question" is empty)"};

    q.kind = enum_field(
        *o, "type", {}, QuestionKind::blocking, "blocking, non_blocking, approval, error_recovery");
    const auto fallback =
        q.kind == QuestionKind::approval ? ResponseType::approval : ResponseType::text;
    q.response_type = enum_field(
        *o, "responseType", "response_type", fallback, "text, choice, boolean, approval");

    if (const auto* v = field(*o, "options")) q.options = options_of(*v);
    if (q.response_type == ResponseType::choice && q.options.empty()) {
        throw Invalid{R"(responseType "choice" needs a non-empty "options")"};
    }
    if (const auto* v = field(*o, "context")) {
        const auto* str = v->if_string();
        q.context = str != nullptr ? std::string{*str} : json::serialize(*v);
    }
    if (const auto* v = field(*o, "timeoutMinutes", "timeout_minutes")) {
        q.timeout_minutes = timeout_of(*v);
    }
    if (const auto* v = field(*o, "defaultResponse", "default_response")) {
        q.default_response = default_of(*v, q.response_type, q.options);
    }
    return q;
}

/// The JSON of a block body: trimmed, and without one enclosing fenced code block, since
/// models like to write ```json around JSON.
std::string_view json_text(std::string_view body) {
    std::string_view s = trim(body);
    if (!(s.starts_with("```") || s.starts_with("~~~"))) return s;
    const char mark = s.front();
    const std::size_t first_nl = s.find('\n');
    const std::size_t last_nl = s.rfind('\n');
    if (first_nl == std::string_view::npos || last_nl == first_nl) return s;
    const std::string_view last = trim(s.substr(last_nl + 1));
    if (last.size() < 3 || last.find_first_not_of(mark) != std::string_view::npos) return s;
    return s.substr(first_nl + 1, last_nl - first_nl - 1);
}

}  // namespace

QuestionScan scan_questions(std::string_view output) {
    QuestionScan result;
    Warnings warnings{result.warnings};
    LineCounter lines{output};
    agent_output::TagScanner scanner{output, "question"};
    json::parser parser;

    while (const auto event = scanner.next()) {
        const std::size_t at = event->at;
        const auto where = [&] {
            return "<question> at line " + std::to_string(lines.line_of(at));
        };
        switch (event->kind) {
            case TagEvent::Kind::unterminated:
                warnings.add([&] { return "unterminated " + where(); });
                continue;
            case TagEvent::Kind::nested:
                warnings.add([&] {
                    return "unterminated " + where() +
                           " (another <question> starts before its </question>)";
                });
                continue;
            case TagEvent::Kind::stray_close:
                warnings.add([&] {
                    return "stray </question> at line " + std::to_string(lines.line_of(at));
                });
                continue;
            case TagEvent::Kind::tag:
                break;
        }

        const std::string_view text = json_text(event->body);
        parser.reset();
        json::error_code ec;
        const std::size_t parsed = parser.write(text.data(), text.size(), ec);
        if (ec) {
            warnings.add([&] {
                const std::string block = where();
                const auto error_at = static_cast<std::size_t>(text.data() - output.data()) +
                                      std::min(parsed, text.size());
                return block + ": invalid JSON at line " + std::to_string(lines.line_of(error_at)) +
                       " (" + ec.message() + ")";
            });
            continue;
        }
        try {
            result.questions.push_back(question_of(parser.release()));
        } catch (const Invalid& invalid) {
            warnings.add([&] { return where() + ": " + invalid.what(); });
        }
    }
    warnings.finish();
    return result;
}

}  // namespace board
