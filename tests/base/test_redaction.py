"""Redaction of password fields and URL passwords, and what it leaves alone."""

from __future__ import annotations

import pytest

from base.redaction import redact, redactor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password: hunter2hunter2", "password: [redacted]"),
        ('{"api_key": "abcd1234efgh"}', '{"api_key": "[redacted]"}'),
        ("PASSWD=s3cr3tvalue and more", "PASSWD=[redacted] and more"),
        ("postgresql://user:secret@host/db", "postgresql://user:[redacted]@host/db"),
        ("see https://alice:pa55word@example.org/x", "see https://alice:[redacted]@example.org/x"),
    ],
)
def test_a_secret_field_or_a_url_password_is_redacted(text, expected):
    assert redact(text, {}) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I forgot the password: it is long",  # a word of two letters is not a secret
        "passwords matter",
        "postgresql://host/db and https://example.org:8080/x",  # no credentials
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact(text, {}) == text


def test_a_redactor_reads_the_environment_once_and_redacts_data():
    clean = redactor({"MY_TOKEN": "tok-1234567"})
    assert clean.data({"a": ["tok-1234567", 3]}) == {"a": ["[redacted MY_TOKEN]", 3]}
