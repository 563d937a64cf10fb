"""
The fuzz run's own check (scripts/fuzz.mts loads this file through SCHEMATHESIS_HOOKS): every 4xx must say what is
wrong. Its body is the emulator's error body, `{"detail": ...}`, where `detail` is a sentence that is more than the
status's reason phrase ("Not Found" names no record), or the validation issues, each with where (`loc`) and what (`msg`).
"""

from http import HTTPStatus

import schemathesis

# A reason phrase alone repeats the status code; it does not name the problem.
REASON_PHRASES = {status.phrase.lower() for status in HTTPStatus}

# Where the interface itself answers a bare `Not Found` ("Some Context Source reads use a generic not-found
# response"): a missing source of an existing Context. The emulator answers so, as the service does.
GENERIC_NOT_FOUND = {"/contexts/{contextGuid}/context_sources/{guid}"}


def problem_with(body):
    """Why `body` does not name the problem, or None when it does."""
    if not isinstance(body, dict) or "detail" not in body:
        return "the body is not a JSON object with `detail`"
    detail = body["detail"]
    if isinstance(detail, str):
        if not detail.strip():
            return "`detail` is empty"
        if detail.strip().rstrip(".").lower() in REASON_PHRASES:
            return f"`detail` is only the reason phrase {detail!r}"
        return None
    if isinstance(detail, list) and detail:
        for issue in detail:
            if not (isinstance(issue, dict) and issue.get("loc") and isinstance(issue.get("msg"), str) and issue["msg"].strip()):
                return "a validation issue lacks `loc` or `msg`"
        return None
    return "`detail` is neither a sentence nor a list of validation issues"


@schemathesis.check
def error_names_problem(ctx, response, case):
    """A 4xx answer names what is wrong with the request."""
    if not 400 <= response.status_code < 500:
        return None
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code == 404 and case.operation.path in GENERIC_NOT_FOUND and body == {"detail": "Not Found"}:
        return None
    problem = problem_with(body)
    if problem is not None:
        raise AssertionError(f"{response.status_code} without a useful body: {problem}")
    return None
