import { router } from '../procedures.js';
import { getSettingsRoute } from './get.js';
import { updateSettingsRoute } from './update.js';

export const settingsRouter = router({
  get: getSettingsRoute,
  update: updateSettingsRoute,
});
