"""The web UI (`benchyard serve`): the store's runs, attempts, comparisons, benchmarks and queue as
server-rendered pages, each also answering as JSON. Handlers parse, call the library (store,
report, runner.api, spec) and render; see docs/web.md."""
