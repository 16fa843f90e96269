import { router } from '../procedures.js';
import { createWebhookRoute } from './create.js';
import { deleteWebhookRoute } from './delete.js';
import { listWebhooksRoute } from './list.js';
import { listWebhookDeliveriesRoute } from './list-deliveries.js';
import { retryWebhookDeliveryRoute } from './retry-delivery.js';
import { rotateWebhookSecretRoute } from './rotate-secret.js';
import { testWebhookRoute } from './test.js';

export const webhooksRouter = router({
  create: createWebhookRoute,
  list: listWebhooksRoute,
  delete: deleteWebhookRoute,
  rotateSecret: rotateWebhookSecretRoute,
  test: testWebhookRoute,
  deliveries: router({
    list: listWebhookDeliveriesRoute,
    retry: retryWebhookDeliveryRoute,
  }),
});
