// PlanItem as test/schema-plan.test.ts declares it, version v3.
import { BaseModel, ParseClass, ParseField } from '../../../lib/index.js'

@ParseClass('PlanItem', { clp: { delete: { requiresAuthentication: true } } })
export class PlanItem extends BaseModel {
  @ParseField({ type: 'String' }) declare sku: string
  @ParseField({ type: 'String', enum: ['a', 'b', 'c'] }) declare kind: string
}
