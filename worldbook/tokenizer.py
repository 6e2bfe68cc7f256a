"""The tokenizer worldbook selection counts with: cl100k, as the seed counts budgets."""

from console.tokens import TOKENIZER_NAME, count_tokens
from worldbook.engine.tokens import Tokenizer

CL100K = Tokenizer(TOKENIZER_NAME, count_tokens)
