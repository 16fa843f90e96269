import { getPartnerSettings } from '../../features/partners/settings.js';
import { partnerProcedure } from '../procedures.js';
import { getSettingsMeta, ZGetSettingsResponse } from './get.types.js';

export const getSettingsRoute = partnerProcedure
  .meta(getSettingsMeta)
  .output(ZGetSettingsResponse)
  .query(({ ctx }) => getPartnerSettings(ctx.db, ctx.partner));
