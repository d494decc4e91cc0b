"""``Calibration.documents_array`` (the semantic guard's calibration of whole similarity matrices)
gives the figures of ``Calibration.documents`` element by element, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.domain.similarity import Calibration

CALIBRATION = Calibration("m", unrelated=0.12, paraphrase=0.83, query_unrelated=0.1, query_paraphrase=0.7)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-1.0, max_value=1.0, width=32), min_size=1, max_size=40))
def test_the_array_form_equals_the_scalar_one(cosines: list[float]) -> None:
    matrix = np.asarray(cosines, dtype=np.float32).reshape(1, -1)
    scalar = [CALIBRATION.documents(float(c)) for c in matrix.ravel()]
    assert CALIBRATION.documents_array(matrix).ravel().tolist() == scalar
    assert CALIBRATION.documents_array(matrix).shape == matrix.shape


def test_the_ends_are_clipped() -> None:
    assert CALIBRATION.documents_array([-1.0, 0.12, 1.0]).tolist() == [0.0, 0.0, 1.0]
