-- The interface's identity rule holds for signed deliveries too (issue 48): a delivery whose identity (the
-- configured header, the provider's delivery header, X-Service-Delivery-Id, else the body's hash) was already
-- accepted by the webhook is a Duplicate. Signed deliveries keep their replay key as well (0015), so a captured
-- delivery under a fresh ID stays a Duplicate: a signed delivery is accepted only when both are new. One accepted
-- delivery per webhook and identity, whatever the mode, held by one unique index.
--
-- Until now a signed delivery with an accepted delivery's ID and a new body was accepted. Those rows are history
-- (they started runs) and stay as they are, marked, so that the index can be built over the rest.
ALTER TABLE webhook_deliveries ADD COLUMN identity_reused boolean NOT NULL DEFAULT false;
UPDATE webhook_deliveries d SET identity_reused = true
  WHERE d.status = 'Accepted'
    AND EXISTS (
      SELECT 1 FROM webhook_deliveries e
      WHERE e.webhook_uid = d.webhook_uid AND e.delivery_id = d.delivery_id AND e.status = 'Accepted' AND e.seq < d.seq
    );
DROP INDEX webhook_deliveries_identity;
CREATE UNIQUE INDEX webhook_deliveries_identity ON webhook_deliveries (webhook_uid, delivery_id)
  WHERE status = 'Accepted' AND NOT identity_reused;
