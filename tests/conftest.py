"""Settings every test shares: one hypothesis profile.

Property tests run generated packets through whole pipelines, whose first call can be
slow (schemas compiled, patterns built), so no example has a deadline and slow data
generation is no failure. Each test still says how many examples it wants.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("cmp", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cmp")
