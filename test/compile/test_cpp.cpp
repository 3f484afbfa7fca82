// test_cpp.cpp - hwtimer.h compiles as C++ (C++11, every warning the project uses, and
// -Wold-style-cast) and works there: the implementation is built by the C++ compiler, under
// extern "C". The implementation is C, with C casts: g++ does not apply -Wold-style-cast
// under extern "C", clang++ does, so for clang++ it is off for the implementation only. The
// public macros (HWTIMER_MS, HWTIMER_CONTAINER_OF, ...) are expanded in this file's own code
// below, where the warning is on: they must be C++ casts in C++.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wold-style-cast"
#endif
#define HWTIMER_IMPLEMENTATION
#include "../../hwtimer.h"
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <cstdio>

namespace {

struct fake_clock {
    uint64_t now;
};

uint64_t read_fake_clock(void *ctx) {
    return static_cast<fake_clock *>(ctx)->now;
}

struct counter {
    hwtimer_timeout to; // embedded, as in C
    int runs;
};

extern "C" void count_run(hwtimer_timeout *to, void *arg) {
    counter *c = HWTIMER_CONTAINER_OF(to, counter, to);
    if (c == static_cast<counter *>(arg)) {
        c->runs++;
    }
}

int failures = 0;

void expect(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "test_cpp: failed: %s\n", what);
        failures++;
    }
}

} // namespace

int main() {
    const uint64_t ms = HWTIMER_MS(1);
    expect(ms == 1000000 && HWTIMER_US(1000) == ms && HWTIMER_SEC(1) == 1000 * ms,
           "HWTIMER_US, HWTIMER_MS, HWTIMER_SEC");
    fake_clock clock = {0};
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = ms;
    cfg.clock_fn = read_fake_clock;
    cfg.clock_ctx = &clock;

    hwtimer *t = nullptr;
    expect(hwtimer_create(&t, &cfg) == HWTIMER_OK && t != nullptr, "create");
    if (t == nullptr) {
        return 1;
    }
    counter c = {HWTIMER_TIMEOUT_INIT, 0};
    expect(HWTIMER_CONTAINER_OF(&c.to, counter, to) == &c, "HWTIMER_CONTAINER_OF");
    expect(hwtimer_timeout_state(&c.to) == HWTIMER_IDLE, "idle");
    expect(hwtimer_schedule(t, &c.to, 3 * ms, count_run, &c) == HWTIMER_OK, "schedule");
    expect(hwtimer_pending(t) == 1, "pending");
    clock.now = 2 * ms;
    expect(hwtimer_advance(t, clock.now) == 0, "not early");
    clock.now = 3 * ms;
    expect(hwtimer_advance(t, clock.now) == 1, "fires at its boundary");
    expect(c.runs == 1, "callback ran once");
    expect(hwtimer_timeout_state(&c.to) == HWTIMER_EXPIRED, "expired");
    expect(hwtimer_stop(t, nullptr, nullptr) == 0, "stop");
    hwtimer_destroy(t);
    std::printf("%s\n", failures == 0 ? "1 passed, 0 failed" : "0 passed, 1 failed");
    return failures == 0 ? 0 : 1;
}
