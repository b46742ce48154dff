// Parsing the fake agent's behaviour script. Every mistake in a script is an error naming the
// token: a test that misspells an action must fail loudly, not run a different scenario.

#include "script.hpp"

#include <algorithm>
#include <charconv>

namespace board::fake_agent {
namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
}

/// A whole decimal number in [min, max], or false.
bool read_number(std::string_view text, long long min, long long max, long long& out) {
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return !text.empty() && ec == std::errc{} && ptr == end && out >= min && out <= max;
}

/// `12`, `0.25`: what a JSON number prints as, so the result line stays valid JSON.
bool is_decimal(std::string_view text) {
    const auto dot = text.find('.');
    const auto digits = [](std::string_view part) {
        return !part.empty() &&
               std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (dot == std::string_view::npos) return digits(text);
    return digits(text.substr(0, dot)) && digits(text.substr(dot + 1));
}

/// Safe inside a JSON string without escaping.
bool is_json_safe(std::string_view text) {
    return std::none_of(text.begin(), text.end(), [](char c) {
        return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
    });
}

constexpr std::string_view unknown_action =
    "unknown action (expected artifact=, signal=, question=, exit=, sleep=, hang, grandchild, "
    "commit=, wait=, "
    "flood=, no-stdin, cost=, session=, garbage, stderr=, stdout=)";

constexpr long long max_sleep_ms = 24LL * 3600 * 1000;
constexpr long long max_flood_mib = 64LL * 1024;

}  // namespace

std::vector<std::string> tokenize(std::string_view line, std::string& error) {
    std::vector<std::string> tokens;
    std::size_t i = 0;
    while (i < line.size()) {
        if (is_blank(line[i])) {
            ++i;
            continue;
        }
        std::string token;
        while (i < line.size() && !is_blank(line[i]) && line[i] != '=') token += line[i++];
        if (i < line.size() && line[i] == '=') {
            token += line[i++];
            const char quote = i < line.size() ? line[i] : '\0';
            if (quote == '"' || quote == '\'') {
                const std::size_t opened_at = i++;
                bool closed = false;
                while (i < line.size()) {
                    const char c = line[i++];
                    if (c == quote) {
                        closed = true;
                        break;
                    }
                    if (quote == '"' && c == '\\' && i < line.size()) {
                        const char escaped = line[i++];
                        token += escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
                        continue;
                    }
                    token += c;
                }
                if (!closed) {
                    error = "unterminated " + std::string(1, quote) + " opened at column " +
                            std::to_string(opened_at + 1);
                    return {};
                }
                if (i < line.size() && !is_blank(line[i])) {
                    error = "text right after the closing quote at column " + std::to_string(i + 1);
                    return {};
                }
            } else {
                while (i < line.size() && !is_blank(line[i])) token += line[i++];
            }
        }
        tokens.push_back(std::move(token));
    }
    return tokens;
}

ParsedLine parse_line(std::string_view line) {
    ParsedLine parsed;
    const auto tokens = tokenize(line, parsed.error);
    if (!parsed.error.empty()) return parsed;
    const auto fail = [&](const std::string& token, const std::string& why) {
        parsed.actions.clear();
        parsed.error = "\"" + token + "\": " + why;
        return parsed;
    };
    for (const auto& token : tokens) {
        if (!parsed.actions.empty()) {
            const auto last = parsed.actions.back().kind;
            if (last == Action::Kind::exit || last == Action::Kind::hang) {
                return fail(token, "comes after exit= or hang, so it would never run");
            }
        }
        const auto equals = token.find('=');
        const std::string key = token.substr(0, equals);
        const bool has_value = equals != std::string::npos;
        const std::string value = has_value ? token.substr(equals + 1) : std::string{};
        Action action;
        action.text = value;

        if (key == "no-stdin" || key == "garbage") {
            if (has_value) return fail(token, "takes no value");
            action.kind = key == "garbage" ? Action::Kind::garbage : Action::Kind::no_stdin;
        } else if (key == "hang") {
            if (has_value && value != "ignore-term") {
                return fail(token, "expected hang or hang=ignore-term");
            }
            action.kind = Action::Kind::hang;
        } else if (key == "grandchild") {
            if (has_value && value != "closed" && value != "setsid") {
                return fail(token, "expected grandchild, grandchild=closed or grandchild=setsid");
            }
            action.kind = Action::Kind::grandchild;
        } else if (!has_value) {
            const bool takes_value = key == "artifact" || key == "signal" || key == "question" ||
                                     key == "exit" || key == "sleep" || key == "flood" ||
                                     key == "cost" || key == "session" || key == "stderr" ||
                                     key == "stdout" || key == "commit" || key == "wait";
            return fail(
                token,
                takes_value ? "needs a value: " + key + "=..." : std::string{unknown_action});
        } else if (key == "artifact") {
            if (value != "complete" && value != "in-progress" && value != "none") {
                return fail(token, "expected artifact=complete, in-progress or none");
            }
            action.kind = Action::Kind::artifact;
        } else if (key == "signal") {
            const auto colon = value.find(':');
            const auto name = trim(std::string_view{value}.substr(0, colon));
            if (name.empty()) return fail(token, "the signal has no name");
            action.kind = Action::Kind::signal;
            action.text = std::string{name};
            if (colon != std::string::npos) {
                action.context = std::string{trim(std::string_view{value}.substr(colon + 1))};
            }
        } else if (key == "question") {
            if (value.empty()) return fail(token, "the question is empty");
            action.kind = Action::Kind::question;
        } else if (key == "exit") {
            if (!read_number(value, 0, 255, action.number)) {
                return fail(token, "expected an exit code from 0 to 255");
            }
            action.kind = Action::Kind::exit;
        } else if (key == "sleep") {
            if (!read_number(value, 0, max_sleep_ms, action.number)) {
                return fail(token, "expected milliseconds, from 0 to one day");
            }
            action.kind = Action::Kind::sleep;
        } else if (key == "flood") {
            if (!read_number(value, 0, max_flood_mib, action.number)) {
                return fail(token, "expected a whole number of MiB, from 0 to 65536");
            }
            action.kind = Action::Kind::flood;
        } else if (key == "cost") {
            if (!is_decimal(value)) return fail(token, "expected a decimal amount like 0.25");
            action.kind = Action::Kind::cost;
        } else if (key == "session") {
            if (value.empty() || !is_json_safe(value)) {
                return fail(token,
                            "expected a non-empty id without quotes, backslashes or "
                            "control characters");
            }
            action.kind = Action::Kind::session;
        } else if (key == "commit") {
            if (value.front() == '/' || value.find("..") != std::string::npos)
                return fail(token, "expected a file inside the working directory");
            action.kind = Action::Kind::commit;
        } else if (key == "wait") {
            if (value.find('/') != std::string::npos || value.front() == '.')
                return fail(token, "expected a file name in fake-agent/ (no '/', no leading '.')");
            action.kind = Action::Kind::wait;
        } else if (key == "stderr" || key == "stdout") {
            action.kind = key == "stderr" ? Action::Kind::stderr_text : Action::Kind::stdout_text;
        } else {
            return fail(token, std::string{unknown_action});
        }
        parsed.actions.push_back(std::move(action));
    }
    return parsed;
}

std::vector<std::string> split_script(std::string_view text) {
    std::vector<std::string> lines;
    while (!text.empty()) {
        const auto end = text.find('\n');
        auto line = text.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.emplace_back(line);
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return lines;
}

std::size_t line_for_run(std::size_t line_count, std::size_t run) {
    return std::min(std::max<std::size_t>(run, 1), line_count) - 1;
}

bool skips_stdin(const std::vector<Action>& actions) {
    return std::any_of(actions.begin(), actions.end(), [](const Action& a) {
        return a.kind == Action::Kind::no_stdin;
    });
}

bool names_artifact(const std::vector<Action>& actions) {
    return std::any_of(actions.begin(), actions.end(), [](const Action& a) {
        return a.kind == Action::Kind::artifact;
    });
}

}  // namespace board::fake_agent
