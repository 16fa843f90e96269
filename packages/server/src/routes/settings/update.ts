import { updatePartnerSettings } from '../../features/partners/settings.js';
import { partnerProcedure } from '../procedures.js';
import { updateSettingsMeta, ZUpdateSettingsRequest, ZUpdateSettingsResponse } from './update.types.js';

export const updateSettingsRoute = partnerProcedure
  .meta(updateSettingsMeta)
  .input(ZUpdateSettingsRequest)
  .output(ZUpdateSettingsResponse)
  .mutation(({ ctx, input }) => updatePartnerSettings(ctx.db, ctx.partner, input));
