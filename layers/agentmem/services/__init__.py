"""Services: orchestration over the ports. No vendor SDK here."""
