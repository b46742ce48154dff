#pragma once
// The machinery shared by the event and ticket codecs. Each model struct lists its wire
// fields once, in a `describe(io, x)` function (schema.hpp); the Writer below walks that list
// to encode and the Reader to decode, so the two directions cannot drift apart.
//
// The vocabulary a describe() uses:
//   io.identity(name, v)        written always; must be present when read, in any mode
//   io.required(name, v)        written always; must be present, unless the Reader is lenient
//   io.optional(name, v)        written always (a std::optional only when engaged); may be
//                               absent when read, and then keeps the default it had
//   io.unless_default(name, v)  written only when v differs from its default; may be absent
//   io.clearable(name, v)       Updated's requires/awaiting: absent, "none" or a value

#include "json_writer.hpp"

#include <board/codec.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace board::codec_detail {

namespace json = boost::json;

/// Marks a UnixMillis (or an optional one) as a timestamp on the wire. UnixMillis is a plain
/// int64, like `seq`, so without the mark it would be written as a number.
template <class M>
struct Time {
    M& ms;
};

template <class M>
Time(M&) -> Time<M>;

/// `Is<Created> S` accepts Created and const Created: one describe() serves both directions.
template <class S, class T>
concept Is = std::same_as<std::remove_const_t<S>, T>;

/// A model enumeration: written as its to_string() spelling, read with parse<E>().
template <class E>
concept Enum = std::is_enum_v<E>;

using Artifacts = decltype(Ticket::artifacts);

// ---------------------------------------------------------------------------------------------
// Errors

/// Where a value sits in the document. Built on the stack as the reader descends and rendered
/// only when something is wrong, so a good line pays nothing for it.
class Path {
public:
    Path() = default;

    Path member(std::string_view key) const { return Path{this, key, 0}; }

    Path element(std::size_t index) const { return Path{this, {}, index}; }

    bool is_root() const { return parent_ == nullptr; }

    /// `policy.gate`, `questions[1].options[0].id`; empty for the document itself.
    std::string render() const;

private:
    Path(const Path* parent, std::string_view key, std::size_t index)
        : parent_(parent)
        , key_(key)
        , index_(index) {}

    const Path* parent_ = nullptr;
    std::string_view key_;  ///< empty: an array element (or the root, without a parent)
    std::size_t index_ = 0;
};

/// Thrown inside the codec only: the public decode functions catch it and return its error.
/// Throwing keeps every reader straight-line code; a well-formed input never pays for it.
struct DecodeFailure {
    CodecError error;
};

[[noreturn]] void fail(std::string field, std::string message);

/// `field "<at>": <problem>`, or just the problem when `at` is the whole document.
[[noreturn]] void fail_at(const Path& at, std::string_view problem);

/// `field "<at>": expected <expected>, got <the kind of got>`.
[[noreturn]] void fail_type(const Path& at, std::string_view expected, const json::value& got);

/// `text` as a JSON string literal for a message, shortened if long.
std::string quote(std::string_view text);

/// Runs a decode, turning every failure (including std::bad_alloc) into a CodecError.
template <class T, class F>
DecodeResult<T> guarded(F&& decode) {
    try {
        return decode();
    } catch (DecodeFailure& failure) {
        return std::move(failure.error);
    } catch (const std::bad_alloc&) {
        return CodecError{{}, "out of memory while decoding"};
    } catch (const std::exception& e) {
        return CodecError{{}, std::string{"cannot decode: "} + e.what()};
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// The double a JSON number's `text` denotes, rounded correctly (std::from_chars), or
/// `parsed` (Boost's own conversion) when from_chars cannot represent it. Every decoding path
/// converts doubles with this, so they agree to the bit.
double exact_double(double parsed, std::string_view text);

/// Parses JSON text as boost::json::parser does, except that doubles are converted with
/// std::from_chars, which rounds correctly: Boost.JSON 1.81 puts about one double in ten on a
/// neighbouring value, so costs would drift on every round trip. Reusable; not thread-safe.
class JsonParser {
public:
    JsonParser();
    ~JsonParser();
    JsonParser(const JsonParser&) = delete;
    JsonParser& operator=(const JsonParser&) = delete;
    JsonParser(JsonParser&&) = delete;
    JsonParser& operator=(JsonParser&&) = delete;

    /// The document, its memory from `storage`. Throws DecodeFailure if `text` is not one
    /// complete JSON text (trailing whitespace is fine), naming the byte offset.
    json::value parse(std::string_view text, json::storage_ptr storage = {});

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// Writing

template <class T>
bool is_default(const T& value) {
    return value == T{};
}

template <class M>
bool is_default(Time<M> time) {
    return time.ms == 0;
}

class Writer {
public:
    explicit Writer(std::string& out)
        : out_(out) {}

    JsonWriter& json() { return out_; }

    template <class T>
    void identity(std::string_view name, const T& value) {
        out_.key(name);
        put(value);
    }

    template <class T>
    void required(std::string_view name, const T& value) {
        identity(name, value);
    }

    template <class T>
    void optional(std::string_view name, const T& value) {
        identity(name, value);
    }

    template <class T>
    void optional(std::string_view name, const std::optional<T>& value) {
        if (value) identity(name, *value);
    }

    void optional(std::string_view name, Time<const std::optional<UnixMillis>> time) {
        if (time.ms) identity(name, Time{*time.ms});
    }

    template <class T>
    void unless_default(std::string_view name, const T& value) {
        if (!is_default(value)) identity(name, value);
    }

    void clearable(std::string_view name, const std::optional<std::optional<Awaiting>>& value) {
        if (!value) return;
        out_.key(name);
        out_.string(*value ? to_string(**value) : "none");
    }

    void put(const std::string& text) { out_.string(text); }

    void put(bool value) { out_.boolean(value); }

    void put(int number) { out_.integer(number); }

    void put(std::int64_t number) { out_.integer(number); }

    void put(double number) { out_.number(number); }

    void put(const Actor& actor) { out_.string(to_string(actor)); }

    void put(const Artifacts& artifacts);  // an object keyed by kind (ticket_codec.cpp)

    template <class M>
    void put(Time<M> time) {
        out_.timestamp(time.ms);
    }

    template <Enum E>
    void put(const E& value) {
        out_.string(to_string(value));
    }

    template <class T>
    void put(const std::vector<T>& values) {
        out_.begin_array();
        for (const auto& value : values) put(value);
        out_.end_array();
    }

    /// A struct with a describe(): a nested object.
    template <class T>
    void put(const T& value) {
        out_.begin_object();
        describe(*this, value);
        out_.end_object();
    }

private:
    JsonWriter out_;
};

// ---------------------------------------------------------------------------------------------
// Reading

class Reader {
public:
    /// Fails unless `value` is an object. A lenient reader lets `required` fields be absent
    /// (tickets: see decode_ticket); `identity` fields are required in either mode.
    Reader(const json::value& value, const Path& path, bool lenient);

    const Path& path() const { return path_; }

    /// The member's value, or nullptr if absent.
    const json::value* find(std::string_view name) const;

    /// The member's value; fails with `missing field` if absent.
    const json::value& need(std::string_view name) const;

    /// A required string member, without copying it.
    std::string_view text(std::string_view name) const;

    template <class T>
    void identity(std::string_view name, T&& out) const {
        get(need(name), path_.member(name), out);
    }

    template <class T>
    void required(std::string_view name, T&& out) const {
        if (lenient_)
            optional(name, out);
        else
            identity(name, out);
    }

    template <class T>
    void optional(std::string_view name, T&& out) const {
        if (const auto* value = find(name)) get(*value, path_.member(name), out);
    }

    template <class T>
    void optional(std::string_view name, std::optional<T>& out) const {
        if (const auto* value = find(name)) get(*value, path_.member(name), out.emplace());
    }

    void optional(std::string_view name, Time<std::optional<UnixMillis>> time) const {
        if (const auto* value = find(name))
            get(*value, path_.member(name), Time{time.ms.emplace()});
    }

    template <class T>
    void unless_default(std::string_view name, T&& out) const {
        optional(name, out);
    }

    void clearable(std::string_view name, std::optional<std::optional<Awaiting>>& out) const;

    void get(const json::value& value, const Path& at, std::string& out) const;
    void get(const json::value& value, const Path& at, bool& out) const;
    void get(const json::value& value, const Path& at, int& out) const;
    void get(const json::value& value, const Path& at, std::int64_t& out) const;
    void get(const json::value& value, const Path& at, double& out) const;
    void get(const json::value& value, const Path& at, Actor& out) const;
    void get(const json::value& value, const Path& at, Time<UnixMillis> out) const;
    void get(const json::value& value, const Path& at, Artifacts& out) const;  // ticket_codec.cpp

    template <Enum E>
    void get(const json::value& value, const Path& at, E& out) const {
        const std::string_view spelling = string_of(value, at);
        const std::optional<E> parsed = parse<E>(spelling);
        if (!parsed) fail_at(at, "unknown value " + quote(spelling));
        out = *parsed;
    }

    template <class T>
    void get(const json::value& value, const Path& at, std::vector<T>& out) const {
        const json::array& items = array_of(value, at);
        out.clear();
        out.reserve(items.size());
        for (std::size_t i = 0; i < items.size(); ++i)
            get(items[i], at.element(i), out.emplace_back());
    }

    /// A struct with a describe(): a nested object.
    template <class T>
    void get(const json::value& value, const Path& at, T& out) const {
        const Reader nested{value, at, lenient_};
        describe(nested, out);
    }

    static std::string_view string_of(const json::value& value, const Path& at);
    static const json::array& array_of(const json::value& value, const Path& at);

private:
    const json::object& object_;
    Path path_;
    bool lenient_;
    mutable std::size_t next_ = 0;  ///< where find() looks first: a cache, not state
};

}  // namespace board::codec_detail
