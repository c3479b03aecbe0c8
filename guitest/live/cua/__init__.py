"""The commercial computer-use APIs as live agents, each speaking its provider's own tool loop through its official client.

- ``anthropic:MODEL``: Claude with Anthropic's computer-use tool, Messages API (:mod:`.anthropic`; ``pip install
  'guitest[anthropic]'``);
- ``openai-cua:MODEL``: OpenAI's computer-use tool, Responses API (:mod:`.openai_responses`; the ``openai`` client).

Shared: the declared display and its coordinate mapping (:mod:`.display`), a reply read into tool calls
(:mod:`.turns`), the key, endpoint, retries and errors (:mod:`.adapter`), and the episode's agent (:mod:`.policy`).
Nothing here imports a provider's package until a model of that provider is made; the model registry
(:data:`guitest.registry.MODELS`) names each adapter's ``make``.
"""

from __future__ import annotations
