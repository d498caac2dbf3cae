"""The provider tests' fake OpenAI-compatible server, for the SRE tests too."""

from tests.integration.providers.conftest import fake_llm

__all__ = ["fake_llm"]
