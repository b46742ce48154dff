#include "json_io.hpp"

#include "support/utf8.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/value_stack.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>

namespace board::codec_detail {
namespace {

std::string_view kind_phrase(const json::value& value) {
    switch (value.kind()) {
        case json::kind::null:
            return "null";
        case json::kind::bool_:
            return "a boolean";
        case json::kind::int64:
        case json::kind::uint64:
            return "an integer";
        case json::kind::double_:
            return "a number";
        case json::kind::string:
            return "a string";
        case json::kind::array:
            return "an array";
        case json::kind::object:
            return "an object";
    }
    return "an unknown value";
}

std::string quote_path(const Path& at) {
    std::string text = "\"";
    text += at.render();
    text += '"';
    return text;
}

/// Builds values like boost::json::parser's own handler (boost/json/detail/handler.hpp) but
/// converts doubles from their text with std::from_chars. Boost hands over the number's text
/// with its own conversion, in pieces only when a buffer ends mid-number.
struct ExactDoubleHandler {
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    json::value_stack stack;
    std::string number;  ///< the pieces of a number split across writes

    bool on_document_begin(json::error_code&) { return true; }

    bool on_document_end(json::error_code&) { return true; }

    bool on_object_begin(json::error_code&) { return true; }

    bool on_object_end(std::size_t n, json::error_code&) {
        stack.push_object(n);
        return true;
    }

    bool on_array_begin(json::error_code&) { return true; }

    bool on_array_end(std::size_t n, json::error_code&) {
        stack.push_array(n);
        return true;
    }

    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        stack.push_chars(s);
        return true;
    }

    bool on_key(json::string_view s, std::size_t, json::error_code&) {
        stack.push_key(s);
        return true;
    }

    bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
        stack.push_chars(s);
        return true;
    }

    bool on_string(json::string_view s, std::size_t, json::error_code&) {
        stack.push_string(s);
        return true;
    }

    bool on_number_part(json::string_view s, json::error_code&) {
        number.append(s.data(), s.size());
        return true;
    }

    bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
        number.clear();
        stack.push_int64(i);
        return true;
    }

    bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
        number.clear();
        stack.push_uint64(u);
        return true;
    }

    bool on_bool(bool b, json::error_code&) {
        stack.push_bool(b);
        return true;
    }

    bool on_null(json::error_code&) {
        stack.push_null();
        return true;
    }

    bool on_comment_part(json::string_view, json::error_code&) { return true; }

    bool on_comment(json::string_view, json::error_code&) { return true; }

    bool on_double(double d, json::string_view tail, json::error_code&) {
        std::string_view text{tail.data(), tail.size()};
        if (!number.empty()) text = number.append(tail.data(), tail.size());
        d = exact_double(d, text);
        number.clear();
        stack.push_double(d);
        return true;
    }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Errors

std::string Path::render() const {
    if (parent_ == nullptr) return {};
    std::string text = parent_->render();
    if (key_.empty()) {
        text += '[';
        text += std::to_string(index_);
        text += ']';
    } else {
        if (!text.empty()) text += '.';
        text += key_;
    }
    return text;
}

void fail(std::string field, std::string message) {
    throw DecodeFailure{CodecError{std::move(field), std::move(message)}};
}

void fail_at(const Path& at, std::string_view problem) {
    std::string field = at.render();
    if (field.empty()) fail({}, std::string{problem});
    std::string message = "field " + quote_path(at) + ": ";
    message += problem;
    fail(std::move(field), std::move(message));
}

void fail_type(const Path& at, std::string_view expected, const json::value& got) {
    std::string problem = "expected ";
    problem += expected;
    problem += ", got ";
    problem += kind_phrase(got);
    fail_at(at, problem);
}

std::string quote(std::string_view text) {
    constexpr std::size_t max_shown = 60;
    std::string out;
    if (text.size() <= max_shown) {
        append_json_string(out, text);
        return out;
    }
    // Cut on a character boundary: never in the middle of a UTF-8 sequence.
    std::size_t cut = max_shown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    append_json_string(out, text.substr(0, cut));
    out.insert(out.size() - 1, "...");
    return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

double exact_double(double parsed, std::string_view text) {
    double exact = 0.0;
    const auto* end = text.data() + text.size();
    // Out of range (1e400): keep Boost's value; the codec rejects it as not finite.
    if (const auto result = std::from_chars(text.data(), end, exact);
        result.ec == std::errc{} && result.ptr == end)
        return exact;
    return parsed;
}

struct JsonParser::Impl {
    json::basic_parser<ExactDoubleHandler> parser{json::parse_options{}};
};

JsonParser::JsonParser()
    : impl_(std::make_unique<Impl>()) {}

JsonParser::~JsonParser() = default;

json::value JsonParser::parse(std::string_view text, json::storage_ptr storage) {
    auto& parser = impl_->parser;
    parser.reset();
    parser.handler().stack.reset(std::move(storage));
    parser.handler().number.clear();

    json::error_code ec;
    const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
    if (!ec && consumed < text.size()) ec = json::error::extra_data;
    if (ec) {
        // Boost reports bad UTF-8 as a plain syntax error: if that is what stopped it, say so.
        if (const std::size_t bad = valid_utf8_prefix(text); bad < text.size() && bad <= consumed)
            fail({}, "invalid UTF-8 at offset " + std::to_string(bad));
        fail({}, "invalid JSON at offset " + std::to_string(consumed) + ": " + ec.message());
    }
    return parser.handler().stack.release();
}

// ---------------------------------------------------------------------------------------------
// Reading

Reader::Reader(const json::value& value, const Path& path, bool lenient)
    : object_([&]() -> const json::object& {
        if (const auto* object = value.if_object()) return *object;
        fail_type(path, path.is_root() ? "a JSON object" : "an object", value);
    }())
    , path_(path)
    , lenient_(lenient) {}

const json::value* Reader::find(std::string_view name) const {
    const json::string_view key{name.data(), name.size()};
    // The codec writes keys in the order describe() reads them, so the member after the last
    // one found is usually the one wanted: one comparison instead of a search.
    if (next_ < object_.size()) {
        const auto& member = *(object_.begin() + static_cast<std::ptrdiff_t>(next_));
        if (member.key() == key) {
            ++next_;
            return &member.value();
        }
    }
    const auto found = object_.find(key);
    if (found == object_.end()) return nullptr;
    next_ = static_cast<std::size_t>(found - object_.begin()) + 1;
    return &found->value();
}

const json::value& Reader::need(std::string_view name) const {
    if (const auto* value = find(name)) return *value;
    fail(path_.member(name).render(), "missing field " + quote_path(path_.member(name)));
}

std::string_view Reader::text(std::string_view name) const {
    return string_of(need(name), path_.member(name));
}

std::string_view Reader::string_of(const json::value& value, const Path& at) {
    const auto* string = value.if_string();
    if (string == nullptr) fail_type(at, "a string", value);
    return {string->data(), string->size()};
}

const json::array& Reader::array_of(const json::value& value, const Path& at) {
    const auto* array = value.if_array();
    if (array == nullptr) fail_type(at, "an array", value);
    return *array;
}

void Reader::clearable(std::string_view name, std::optional<std::optional<Awaiting>>& out) const {
    const auto* value = find(name);
    if (value == nullptr) return;
    const Path at = path_.member(name);
    if (string_of(*value, at) == "none") {
        out.emplace(std::nullopt);
        return;
    }
    get(*value, at, out.emplace().emplace());
}

void Reader::get(const json::value& value, const Path& at, std::string& out) const {
    out = string_of(value, at);
}

void Reader::get(const json::value& value, const Path& at, bool& out) const {
    const auto* flag = value.if_bool();
    if (flag == nullptr) fail_type(at, "a boolean", value);
    out = *flag;
}

void Reader::get(const json::value& value, const Path& at, std::int64_t& out) const {
    if (const auto* number = value.if_int64()) {
        out = *number;
        return;
    }
    if (const auto* number = value.if_uint64())  // Boost only uses uint64 above INT64_MAX
        fail_at(at, std::to_string(*number) + " is out of range");
    fail_type(at, "an integer", value);
}

void Reader::get(const json::value& value, const Path& at, int& out) const {
    std::int64_t wide = 0;
    get(value, at, wide);
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
        fail_at(at, std::to_string(wide) + " is out of range");
    out = static_cast<int>(wide);
}

void Reader::get(const json::value& value, const Path& at, double& out) const {
    switch (value.kind()) {
        case json::kind::double_:
            out = value.get_double();
            break;
        case json::kind::int64:
            out = static_cast<double>(value.get_int64());
            break;
        case json::kind::uint64:
            out = static_cast<double>(value.get_uint64());
            break;
        default:
            fail_type(at, "a number", value);
    }
    if (!std::isfinite(out)) fail_at(at, "expected a finite number");
}

void Reader::get(const json::value& value, const Path& at, Actor& out) const {
    const std::string_view text = string_of(value, at);
    auto actor = parse_actor(text);
    if (!actor)
        fail_at(at,
                quote(text) + " is not an actor (expected human:<name>, agent:<phase> or system)");
    out = std::move(*actor);
}

void Reader::get(const json::value& value, const Path& at, Time<UnixMillis> out) const {
    const std::string_view text = string_of(value, at);
    const auto ms = parse_timestamp(text);
    if (!ms) fail_at(at, quote(text) + " is not a UTC timestamp like 2026-11-21T10:04:05.123Z");
    out.ms = *ms;
}

}  // namespace board::codec_detail
