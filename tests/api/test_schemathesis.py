"""Property-based conformance: schemathesis generates requests from the app's own OpenAPI
schema and sends them over real HTTP, once with a client key and once with the admin key.
Every default check must hold (no 5xx, documented status codes, content types, headers
and response bodies, negative data rejected) but one: `positive_data_acceptance` expects
every schema-valid request to succeed, while domain rules no schema can state (a trading
day, the day's price band, holdings and cash) rightly answer 422. At least 1,000 cases.

On Postgres (issue 39's acceptance): it is the stricter store (a NUL in a text it stores
answered 500 there and nowhere else) and the one a deployment with several workers runs;
the control-character sweep (test_control_sweep.py) and every other API test run on both."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from desk import keys as keystore
from pipeline.runner import run_stage
from tests.api import world
from tests.api.conftest import Api
from tests.api.world import MORNING
from tests.conftest import ADMIN_KEY

EXAMPLES_PER_OPERATION = 30
# An operation whose only input is the key this test sends with every case (a report, a
# portfolio read) gets the same request every time: one case per key tests all there is.
# Sending it 25 times rendered the Quant Briefing fifty times, two thirds of this test.
KEY_HEADER = "X-API-Key"
# schemathesis' requests transport gives up after 10 s; a PDF report's first rendering beside
# another worker's end-to-end run on 2 cores came near that (a timeout on the first call
# only). Speed is benchmarks/report_generation.py's to measure, not this test's.
REQUEST_TIMEOUT_SECONDS = 60
DOMAIN_RULES = [positive_data_acceptance]


@pytest.mark.slow
@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_generated_requests_conform_to_the_schema(api: Api) -> None:
    client = keystore.generate(api.world.engine, api.world.settings, "Fuzz Fund", "INSTITUTIONAL", now=MORNING)
    keystore.set_option(api.world.engine, client["key_id"], "RATE_LIMIT_SET", 1_000_000, now=MORNING)
    # macro insights answer 503 until T3 has run, and a 5xx fails the conformance checks
    world.run_t3(api.world.settings)
    run_stage("t1_analysis", world.DAY, settings=api.world.settings)  # likewise the day's analysis
    schema = schemathesis.openapi.from_url(f"{api.base}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 24
    cases, failures = 0, []
    for key in (client["api_key"], ADMIN_KEY):
        for operation in operations:

            @hsettings(
                max_examples=EXAMPLES_PER_OPERATION if _takes_input(operation) else 1,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy())
            def run(case) -> None:
                nonlocal cases
                cases += 1
                case.call_and_validate(
                    base_url=api.base,
                    headers={KEY_HEADER: key},  # noqa: B023 - run() below, same iteration
                    excluded_checks=DOMAIN_RULES,
                    timeout=REQUEST_TIMEOUT_SECONDS,
                )

            try:
                run()
            except BaseException as exc:  # noqa: BLE001 - collect every operation's failure (groups too), then report all
                parts = [exc, *getattr(exc, "exceptions", ())]  # a group's own causes, e.g. a flaky first call's
                failures.append(
                    f"{operation.label}: " + " | ".join(f"{type(e).__name__}: {str(e)[:1500]}" for e in parts)
                )
    assert failures == [], "\n\n".join(failures)
    assert cases >= 1000, cases


def _takes_input(operation: schemathesis.APIOperation) -> bool:
    """Whether two cases of `operation` can differ: a path, query or cookie parameter, a body,
    or a header other than the key that every case is sent with."""
    headers = [h for h in operation.headers if h.name != KEY_HEADER]
    return bool(headers) or any(
        len(part) for part in (operation.path_parameters, operation.query, operation.cookies, operation.body)
    )
